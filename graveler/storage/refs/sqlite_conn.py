"""SQLite through the standard library's ``sqlite3``: connections set up as graveler needs
them, one per thread, the transaction discipline of :mod:`graveler.storage.refs.db`, and the
translation of driver errors into :mod:`graveler.core.errors`.

Imports nothing beyond the standard library and graveler's foundation, so that the embedded
store (:mod:`graveler.storage.refs.sqlite_store`) and the SQLAlchemy store's direct statements
(:mod:`graveler.storage.refs.sqlite_branch`, :mod:`graveler.storage.refs.sqlite_stage`) share it
without loading SQLAlchemy.

Transactions (the concurrency contracts of :mod:`graveler.storage.refs.port` rest on them): writes
run inside ``BEGIN IMMEDIATE`` ... ``COMMIT``, so a writer takes the database write lock before it
reads what it will change and concurrent writers queue on ``busy_timeout``; a durable write
commits with ``synchronous=FULL``, a staging write with ``NORMAL`` (the WAL is written but
not fsynced: durable against a crash of the process at once, against a power loss from the
next durable commit on). Multi-statement reads run inside ``BEGIN`` (deferred), which WAL
never blocks; a single statement sees one snapshot by itself.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from datetime import UTC, datetime
from typing import Protocol

from graveler.core.errors import AlreadyExists, GravelerError, InvalidArgument, StorageError

#: WAL pages after which a commit checkpoints (SQLite's default: 1000). A checkpoint (two
#: fsyncs) after every 1,000 pages cost single puts about 40%; after 10,000 pages (40 MiB of
#: WAL at most) its cost is spread over ten times as many.
CHECKPOINT_PAGES = 10_000
MISSING_TABLES = (
    "graveler tables are missing ({reason}); run the migrations "
    "(SqlMetadataStore(url, migrate=True) or graveler.storage.refs.migrate.upgrade(url))"
)


class DirectSqlite(Protocol):
    """A database whose statements can run on the calling thread's own connection."""

    def direct_transaction(
        self, what: str, *, write: bool = True, durable: bool = False
    ) -> AbstractContextManager[sqlite3.Connection]:
        """The thread's connection, inside ``BEGIN IMMEDIATE`` ... ``COMMIT`` when ``write``
        (``synchronous=FULL`` when ``durable``), else outside any transaction of its own;
        errors translated into :mod:`graveler.core.errors`."""
        ...


def connect(path: str, busy_timeout: float, *, cache_kib: int | None = None) -> sqlite3.Connection:
    """A connection to the database file at ``path`` (or ``file:`` URI) with graveler's
    settings: autocommit (BEGIN is ours), WAL, foreign keys, ``busy_timeout``,
    ``synchronous=NORMAL``, :data:`CHECKPOINT_PAGES`, and a page cache of ``cache_kib``."""
    conn = sqlite3.connect(  # used by one thread; may be closed by another (close())
        path,
        timeout=busy_timeout,
        isolation_level=None,
        uri=path.startswith("file:"),
        check_same_thread=False,
    )
    pragmas = [
        f"busy_timeout = {int(busy_timeout * 1000)}",
        "journal_mode = WAL",
        "foreign_keys = ON",
        "synchronous = NORMAL",
        f"wal_autocheckpoint = {CHECKPOINT_PAGES}",
    ]
    if cache_kib is not None:
        pragmas.append(f"cache_size = -{cache_kib}")
    for pragma in pragmas:
        conn.execute(f"PRAGMA {pragma}")
    return conn


class _Held:
    """A thread's connection: closed when the thread ends (its thread-local slot lets go of
    this holder) or when its owner closes, whichever comes first."""

    __slots__ = ("__weakref__", "conn", "pid")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn, self.pid = conn, os.getpid()

    def close(self) -> None:
        with suppress(sqlite3.Error):
            self.conn.close()

    def __del__(self) -> None:
        self.close()


class ThreadConnections:
    """One connection per thread (and per process: a forked child opens its own) to one
    database file, each opened on first use by :func:`connect`."""

    def __init__(self, path: str, busy_timeout: float, *, cache_kib: int | None = None) -> None:
        self.path, self.busy_timeout, self._cache_kib = path, busy_timeout, cache_kib
        self._local = threading.local()
        self._lock = threading.Lock()
        #: The connections of threads still running (for close() and for tests).
        self.held: weakref.WeakSet[_Held] = weakref.WeakSet()

    def get(self) -> sqlite3.Connection:
        held: _Held | None = getattr(self._local, "held", None)
        if held is None or held.pid != os.getpid():
            conn = connect(self.path, self.busy_timeout, cache_kib=self._cache_kib)
            held = self._local.held = _Held(conn)
            with self._lock:
                self.held.add(held)
        return held.conn

    def close(self) -> None:
        """Close every thread's connection; the next get() of a thread opens a new one."""
        with self._lock:
            for held in list(self.held):
                held.close()
            self.held.clear()
        self._local = threading.local()


@contextmanager
def write_transaction(conn: sqlite3.Connection, *, durable: bool) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` on ``conn`` (rolled back when the block raises),
    with ``synchronous=FULL`` when ``durable`` (the connection stays at ``NORMAL``)."""
    try:
        if durable:
            conn.execute("PRAGMA synchronous = FULL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    finally:
        if durable:
            conn.execute("PRAGMA synchronous = NORMAL")


@contextmanager
def read_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One snapshot for several statements: ``BEGIN`` ... ``COMMIT``, or nothing when ``conn``
    is already inside a transaction (a read made while its thread writes sees that write)."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


@contextmanager
def translate(what: str, *, duplicate: str | None = None) -> Iterator[None]:
    """Re-raise ``sqlite3`` exceptions as GravelerErrors mentioning ``what`` (a unique
    violation as ``AlreadyExists(duplicate)`` when ``duplicate`` is given); GravelerErrors
    raised inside pass through."""
    try:
        yield
    except GravelerError:
        raise
    except sqlite3.IntegrityError as exc:
        if duplicate is not None and is_unique_violation(exc):
            raise AlreadyExists(duplicate) from exc
        raise StorageError(f"{what}: integrity error: {first_line(exc)}") from exc
    except sqlite3.Error as exc:
        raise StorageError(f"{what}: {describe(first_line(exc))}") from exc
    except (OverflowError, UnicodeEncodeError) as exc:  # a parameter the driver cannot bind
        raise InvalidArgument(f"{what}: cannot be stored or looked up: {exc}") from exc


def is_unique_violation(exc: BaseException) -> bool:
    """Whether a SQLite integrity error reports a primary-key / unique violation."""
    name = getattr(exc, "sqlite_errorname", "")
    if name in ("SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_CONSTRAINT_UNIQUE"):
        return True
    return "UNIQUE constraint failed" in str(exc)


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def describe(reason: str, sqlstate: str | None = None) -> str:
    """A one-line explanation of a database failure (SQLite's or PostgreSQL's ``reason``),
    with a hint where one helps."""
    if sqlstate == "42P01" or "no such table" in reason:
        return MISSING_TABLES.format(reason=reason)
    if "database is locked" in reason:
        return f"database is locked: another writer held it past the busy timeout ({reason})"
    if sqlstate in ("40001", "40P01"):
        return f"transaction aborted by a concurrent one, retry ({reason})"
    return f"database error: {reason}"


def format_time(value: datetime) -> str:
    """``value`` as SQLAlchemy's SQLite ``DateTime`` stores a timezone-aware time through
    :class:`graveler.storage.refs.schema.UtcDateTime`: naive UTC text with microseconds. Raises
    InvalidArgument for a naive time (the model requires aware ones)."""
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        raise InvalidArgument(f"naive datetime {value!r}: graveler stores aware UTC times only")
    u = value.astimezone(UTC)
    return (
        f"{u.year:04d}-{u.month:02d}-{u.day:02d} "
        f"{u.hour:02d}:{u.minute:02d}:{u.second:02d}.{u.microsecond:06d}"
    )


def parse_time(text: str) -> datetime:
    """A stored time (naive UTC text, with or without microseconds) as an aware UTC time."""
    when = datetime.fromisoformat(text)
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
