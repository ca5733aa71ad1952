"""SQLite durability levels: writes of staged entries (stage, drop) commit with
``synchronous=NORMAL``, every other write (branch moves, commits, tags, repositories) with
``synchronous=FULL`` (see
``graveler.storage.refs.db.Database.write``). The crash trials of ``tests/stress`` check what this
means for a killed process: every acknowledged write is still there."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import event

from graveler.core.model import StagedEntry
from graveler.storage.refs.db import Database
from graveler.storage.refs.sql import SqlMetadataStore
from tests.refs.conftest import T0, a_commit, new_repository


def _synchronous_levels(store: SqlMetadataStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Records the ``synchronous`` level in force in every write transaction, whether it runs
    through SQLAlchemy (at its BEGIN IMMEDIATE) or on a direct connection
    (``Database.direct_transaction``: just after its BEGIN)."""
    levels: list[int] = []

    def before(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
        if statement.startswith("BEGIN IMMEDIATE"):
            dbapi = conn.connection.dbapi_connection
            levels.append(dbapi.execute("PRAGMA synchronous").fetchone()[0])

    event.listen(store._db.engine, "before_cursor_execute", before)
    real = Database.direct_transaction

    @contextmanager
    def direct(self, what, *, write=True, durable=False):  # type: ignore[no-untyped-def]
        with real(self, what, write=write, durable=durable) as conn:
            if write:
                levels.append(conn.execute("PRAGMA synchronous").fetchone()[0])
            yield conn

    monkeypatch.setattr(Database, "direct_transaction", direct)
    return levels


NORMAL, FULL = 1, 2


def test_staging_is_relaxed_and_branch_moves_are_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through SQLAlchemy (many entries, a generator) and on the direct connection (one
    entry, branch swaps and moves, token drops) alike."""
    store = SqlMetadataStore(f"sqlite:///{tmp_path / 'refs.db'}")
    new_repository(store)
    levels = _synchronous_levels(store, monkeypatch)
    many = [StagedEntry(b"k%d" % i, b"i", b"v") for i in range(40)]  # the SQLAlchemy path
    store.stage("repo", "main", many)
    branch = store.get_branch("repo", "main")
    store.update_branch("repo", branch, branch)
    store.stage("repo", "main", iter(many))
    store.drop_tokens([branch.staging_token])
    store.stage("repo", "main", [StagedEntry(b"k", b"i", b"v")])  # a put: the direct path
    store.update_branch("repo", branch, branch, durable=False)  # a commit's seal
    moved = replace(branch, commit_id=a_commit("c1").id)
    store.advance_branch("repo", branch, moved, a_commit("c1"))
    assert levels == [NORMAL, FULL, NORMAL, NORMAL, NORMAL, NORMAL, FULL]
    # the direct connection is left relaxed for the next staging write
    assert store._db.direct_connection().execute("PRAGMA synchronous").fetchone()[0] == NORMAL
    store.close()


def test_a_commit_row_written_directly_is_the_one_sqlalchemy_writes(tmp_path: Path) -> None:
    """The direct path stores a commit exactly as SQLAlchemy's ``add_commit`` does (its
    time as naive UTC text with microseconds), so either reads it back equal."""
    store = SqlMetadataStore(f"sqlite:///{tmp_path / 'refs.db'}")
    new_repository(store, "one")
    new_repository(store, "two")
    commit = a_commit("c1", creation_date=T0)  # a non-UTC offset and microseconds
    store.add_commit("one", commit)  # SQLAlchemy
    branch = store.get_branch("two", "main")
    store.advance_branch("two", branch, replace(branch, commit_id=commit.id), commit)  # direct
    raw = sqlite3.connect(tmp_path / "refs.db")
    stored = dict(
        raw.execute(
            "SELECT repo, creation_date FROM graveler_commits WHERE id = ?", (commit.id,)
        ).fetchall()
    )
    raw.close()
    assert stored["one"] == stored["two"]
    assert store.get_commit("two", commit.id) == store.get_commit("one", commit.id) == commit
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
    assert len(db._direct.held) == 0  # every thread's connection went with it
    put(99)
    running, stop = threading.Event(), threading.Event()

    def holds_on() -> None:
        put(100)
        running.set()
        stop.wait(30)

    other = threading.Thread(target=holds_on)
    other.start()
    running.wait(30)
    held = list(db._direct.held)
    assert len(held) == 2  # this thread's and the running one's
    store.close()
    stop.set()
    other.join()
    for h in held:
        with pytest.raises(sqlite3.ProgrammingError):  # closed, whichever thread it served
            h.conn.execute("SELECT 1")


# --- the embedded store (standard library) -----------------------------------------------------


def test_the_stdlib_store_is_relaxed_for_staging_and_full_for_branch_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same levels, through the embedded store's one write path
    (``graveler.storage.refs.sqlite_db``), as the SQLAlchemy store's above."""
    from graveler.storage.refs import sqlite_db
    from graveler.storage.refs.sqlite_store import SqliteMetadataStore

    store = SqliteMetadataStore(tmp_path / "refs.db")
    new_repository(store)
    levels: list[int] = []
    real = sqlite_db.write_transaction

    @contextmanager
    def recording(conn, *, durable):  # type: ignore[no-untyped-def]
        with real(conn, durable=durable):
            levels.append(conn.execute("PRAGMA synchronous").fetchone()[0])
            yield

    monkeypatch.setattr(sqlite_db, "write_transaction", recording)
    many = [StagedEntry(b"k%d" % i, b"i", b"v") for i in range(40)]
    store.stage("repo", "main", many)
    branch = store.get_branch("repo", "main")
    store.update_branch("repo", branch, branch)
    store.stage("repo", "main", iter(many))
    store.drop_tokens([branch.staging_token])
    store.stage("repo", "main", [StagedEntry(b"k", b"i", b"v")])
    store.update_branch("repo", branch, branch, durable=False)
    moved = replace(branch, commit_id=a_commit("c1").id)
    store.advance_branch("repo", branch, moved, a_commit("c1"))
    assert levels == [NORMAL, FULL, NORMAL, NORMAL, NORMAL, NORMAL, FULL]
    assert store._db.connection().execute("PRAGMA synchronous").fetchone()[0] == NORMAL
    store.close()


def test_both_stores_read_what_the_other_wrote(tmp_path: Path) -> None:
    """One database file, opened by both stores: repositories, commits (times as the same
    text), branches, tags, staged entries and hook runs round-trip either way."""
    from graveler.core.hookevents import HookEvent, HookResult, HookRun, HookStatus
    from graveler.core.model import Tag
    from graveler.storage.refs.sqlite_store import SqliteMetadataStore

    url = f"sqlite:///{tmp_path / 'refs.db'}"
    with SqlMetadataStore(url) as orm, SqliteMetadataStore(url) as lite:
        for name, writer, reader in (("by-orm", orm, lite), ("by-lite", lite, orm)):
            branch = new_repository(writer, name)
            commit = a_commit("c1", ("c0",), creation_date=T0, metadata={"k": "é"})
            writer.add_commit(name, commit)
            writer.create_tag(name, Tag("v1", "c1"))
            writer.stage(
                name, "main", [StagedEntry(b"a", b"i", b"v"), StagedEntry(b"b", None, None)]
            )
            hook = HookResult("h", "python", HookStatus.FAILED, T0, T0, "act", "boom")
            run = HookRun(
                "r1",
                name,
                HookEvent.PRE_COMMIT,
                HookStatus.FAILED,
                T0,
                T0,
                "c1",
                branch="main",
                source_ref="main",
                hooks=(hook,),
            )
            writer.add_hook_run(run)
            assert reader.get_repository(name) == writer.get_repository(name)
            assert reader.get_commit(name, "c1") == commit
            assert reader.list_branches(name) == [branch] == writer.list_branches(name)
            assert reader.list_tags(name) == [Tag("v1", "c1")]
            assert list(reader.iter_staged(branch.staging_token)) == list(
                writer.iter_staged(branch.staging_token)
            )
            assert reader.get_hook_run(name, "r1") == run == writer.list_hook_runs(name)[0]
        assert [r.name for r in lite.list_repositories()] == ["by-lite", "by-orm"]
    raw = sqlite3.connect(tmp_path / "refs.db")
    texts = raw.execute("SELECT repo, creation_date FROM graveler_commits WHERE id = 'c1'")
    stored = dict(texts.fetchall())
    raw.close()
    assert stored["by-orm"] == stored["by-lite"]


def test_stdlib_connections_end_with_their_thread_or_the_store(tmp_path: Path) -> None:
    import gc
    import threading

    from graveler.storage.refs.sqlite_store import SqliteMetadataStore

    store = SqliteMetadataStore(tmp_path / "refs.db")
    new_repository(store)

    def put(n: int) -> None:
        store.stage("repo", "main", [StagedEntry(b"t%d" % n, b"i", b"v")])

    for n in range(3):
        worker = threading.Thread(target=put, args=(n,))
        worker.start()
        worker.join()
    gc.collect()
    put(99)
    held = list(store._db._conns.held)
    assert len(held) == 1  # this thread's: the workers' went with them
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        held[0].conn.execute("SELECT 1")
