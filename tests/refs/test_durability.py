"""SQLite durability levels: writes of staged entries (stage, drop) commit with
``synchronous=NORMAL``, every other write (branch moves, commits, tags, repositories) with
``synchronous=FULL`` (see
``graveler.refs.db.Database.write``). The crash trials of ``tests/stress`` check what this
means for a killed process: every acknowledged write is still there."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import event

from graveler.model import StagedEntry
from graveler.refs import sqlite_stage
from graveler.refs.sql import SqlMetadataStore
from tests.refs.conftest import new_repository


def _synchronous_levels(store: SqlMetadataStore) -> list[int]:
    """Records the ``synchronous`` level in force at every BEGIN IMMEDIATE."""
    levels: list[int] = []

    def before(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
        if statement.startswith("BEGIN IMMEDIATE"):
            dbapi = conn.connection.dbapi_connection
            levels.append(dbapi.execute("PRAGMA synchronous").fetchone()[0])

    event.listen(store._db.engine, "before_cursor_execute", before)
    return levels


def test_staging_is_relaxed_and_branch_moves_are_full(tmp_path: Path) -> None:
    store = SqlMetadataStore(f"sqlite:///{tmp_path / 'refs.db'}")
    new_repository(store)
    levels = _synchronous_levels(store)
    many = [StagedEntry(b"k%d" % i, b"i", b"v") for i in range(40)]  # the SQLAlchemy path
    store.stage("repo", "main", many)
    branch = store.get_branch("repo", "main")
    store.update_branch("repo", branch, branch)
    store.stage("repo", "main", iter(many))
    store.drop_tokens([branch.staging_token])
    assert levels == [1, 2, 1, 1]  # NORMAL, FULL, NORMAL, NORMAL
    store.close()


def test_a_single_put_is_staged_relaxed_too(tmp_path: Path) -> None:
    """A call of a few entries goes to the driver directly (graveler.refs.sqlite_stage) and
    commits with synchronous=NORMAL as well; a branch move after it is FULL again."""
    store = SqlMetadataStore(f"sqlite:///{tmp_path / 'refs.db'}")
    new_repository(store)
    levels = _synchronous_levels(store)
    seen: list[int] = []
    real = sqlite_stage._stage

    def spy(conn, *args):  # type: ignore[no-untyped-def]
        token = real(conn, *args)
        seen.append(conn.execute("PRAGMA synchronous").fetchone()[0])
        return token

    sqlite_stage._stage = spy
    try:
        store.stage("repo", "main", [StagedEntry(b"k", b"i", b"v")])
        branch = store.get_branch("repo", "main")
        store.update_branch("repo", branch, branch)
        store.stage("repo", "main", [StagedEntry(b"k2", b"i", b"v")])
    finally:
        sqlite_stage._stage = real
    assert seen == [1, 1]  # NORMAL for both stagings
    assert levels == [2]  # the branch move, through SQLAlchemy: FULL
    store.close()


def test_direct_connections_end_with_their_thread_or_the_store(tmp_path: Path) -> None:
    """Each thread stages small calls on a connection of its own, outside the pool: it is
    closed when the thread ends (a server with a thread per request leaks none) and by
    close() for threads still running."""
    import gc
    import threading

    store = SqlMetadataStore(f"sqlite:///{tmp_path / 'refs.db'}")
    new_repository(store)
    db = store._db

    def put(n: int) -> None:
        store.stage("repo", "main", [StagedEntry(b"t%d" % n, b"i", b"v")])

    for n in range(5):
        worker = threading.Thread(target=put, args=(n,))
        worker.start()
        worker.join()
    gc.collect()
    assert len(db._direct_all) == 0  # every thread's connection went with it
    put(99)
    running, stop = threading.Event(), threading.Event()

    def holds_on() -> None:
        put(100)
        running.set()
        stop.wait(30)

    other = threading.Thread(target=holds_on)
    other.start()
    running.wait(30)
    held = list(db._direct_all)
    assert len(held) == 2  # this thread's and the running one's
    store.close()
    stop.set()
    other.join()
    for h in held:
        with pytest.raises(sqlite3.ProgrammingError):  # closed, whichever thread it served
            h.conn.execute("SELECT 1")
