"""The embedded store's database: one SQLite file through the standard library's ``sqlite3``,
a connection per thread, read and write scopes with the transaction discipline of
:mod:`graveler.storage.refs.sqlite_conn`, and records of rows.

It offers what the shared SQLite code asks of a database (``direct_transaction`` for
:mod:`graveler.storage.refs.sqlite_branch` and :mod:`graveler.storage.refs.sqlite_stage`;
``changes`` and ``local_writes`` for :class:`graveler.storage.refs.branch_views.ViewCache`), so the
statements a commit and a put run are the very ones the SQLAlchemy store runs on SQLite.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from graveler.storage.refs.changes import ChangeMarker, sqlite_marker
from graveler.storage.refs.sqlite_conn import (
    ThreadConnections,
    parse_time,
    read_transaction,
    translate,
    write_transaction,
)

#: Page cache per connection (SQLite's default is 2 MiB): bulk staging inserts keys in
#: random order into a b-tree larger than the cache; a bigger one cut its time by a third.
CACHE_KIB = 32 * 1024
#: Columns holding times (naive UTC text), turned into aware datetimes by :func:`records`.
TIME_COLUMNS = frozenset({"creation_date", "started", "ended"})


class SqliteDatabase:
    """One SQLite database file; safe to share between threads (each uses its own
    connection)."""

    dialect = "sqlite"
    is_postgres = False

    def __init__(self, path: str, *, busy_timeout: float = 30.0) -> None:
        self.path = path
        self._busy_timeout = busy_timeout
        self._conns = ThreadConnections(path, busy_timeout, cache_kib=CACHE_KIB)
        #: Write transactions this object has ended (committed or not): with
        #: :meth:`changes`, what tells caches that something may have changed.
        self.local_writes = 0
        self._changes: ChangeMarker | None = None
        self._changes_lock = threading.Lock()

    def connection(self) -> sqlite3.Connection:
        """The calling thread's connection."""
        return self._conns.get()

    def direct_connection(self) -> sqlite3.Connection:
        return self._conns.get()

    @contextmanager
    def read(self, what: str) -> Iterator[sqlite3.Connection]:
        """Several statements on one snapshot; errors become StorageError mentioning ``what``."""
        conn = self._conns.get()
        with translate(what), read_transaction(conn):
            yield conn

    @contextmanager
    def statement(self, what: str) -> Iterator[sqlite3.Connection]:
        """A connection for one statement (its own snapshot), errors translated."""
        with translate(what):
            yield self._conns.get()

    @contextmanager
    def write(
        self, what: str, *, duplicate: str | None = None, durable: bool = True
    ) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``), committed when the block exits normally
        and rolled back otherwise; ``synchronous=FULL`` when ``durable`` (staging writes
        pass False). A unique violation becomes ``AlreadyExists(duplicate)`` when given."""
        conn = self._conns.get()
        try:
            with translate(what, duplicate=duplicate), write_transaction(conn, durable=durable):
                yield conn
        finally:
            self.local_writes += 1

    @contextmanager
    def direct_transaction(
        self, what: str, *, write: bool = True, durable: bool = False
    ) -> Iterator[sqlite3.Connection]:
        """:class:`graveler.storage.refs.sqlite_conn.DirectSqlite`: :meth:`write`, or with ``write``
        False :meth:`statement`."""
        if not write:
            with self.statement(what) as conn:
                yield conn
            return
        with self.write(what, durable=durable) as conn:
            yield conn

    def changes(self) -> ChangeMarker:
        """The marker of commits by other connections and processes
        (:mod:`graveler.storage.refs.changes`), opened on first use."""
        with self._changes_lock:
            if self._changes is None:
                self._changes = sqlite_marker(self.path, self._busy_timeout)
            return self._changes

    def close(self) -> None:
        """Close every connection; the object must not be used afterwards. The change
        marker closes last: its header's descriptor may be the file's last in this process,
        and closing it drops the process's locks on the file."""
        self._conns.close()
        if self._changes is not None:
            self._changes.close()


def records(cursor: sqlite3.Cursor) -> list[SimpleNamespace]:
    """The rows of ``cursor`` with their columns as attributes (what
    :mod:`graveler.storage.refs.rows` reads), times as aware UTC datetimes."""
    names = [d[0] for d in cursor.description]
    times = [n for n in names if n in TIME_COLUMNS]
    found = []
    for row in cursor.fetchall():
        record = SimpleNamespace(**dict(zip(names, row, strict=True)))
        for name in times:
            value = getattr(record, name)
            if value is not None:
                setattr(record, name, parse_time(value))
        found.append(record)
    return found


def marks(values: Iterable[object]) -> str:
    """``?, ?, ...``: one parameter mark per value."""
    return ", ".join("?" for _ in values)


def plain_sqlite_path(url: str) -> str | None:
    """The absolute path of the SQLite file a ``sqlite:///PATH`` URL names, or None for any
    other URL (PostgreSQL, in-memory SQLite, a query string, another driver, an escaped
    character): those stay on SQLAlchemy."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or len(url) == len(prefix):
        return None
    rest = url[len(prefix) :]
    if any(c in rest for c in "?%#") or rest.startswith("file:") or rest == ":memory:":
        return None
    return os.path.abspath(rest)


def schema_revision(path: str) -> str | None:
    """The schema revision recorded in the SQLite file at ``path``, read with the standard
    library; None when there is no such file, no version table or it cannot be read."""
    if not os.path.isfile(path):
        return None
    try:
        conn = sqlite3.connect(path, timeout=30.0)
    except sqlite3.Error:
        return None
    try:
        found = conn.execute("SELECT version_num FROM graveler_alembic_version").fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return str(found[0][0]) if len(found) == 1 else None
