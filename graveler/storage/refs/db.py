"""The SQL connection layer of the refs store: one engine, read and write transactions, and the
translation of SQLAlchemy / driver exceptions into :mod:`graveler.core.errors`.

Transaction discipline (the concurrency contracts of :mod:`graveler.storage.refs.port` rest on it):

* SQLite: WAL journal, ``busy_timeout``, foreign keys on. SQLAlchemy is told not to let the
  ``sqlite3`` module issue BEGIN (the documented event-hook recipe); we emit it ourselves:
  ``BEGIN IMMEDIATE`` for write transactions, so a writer takes the database write lock *before*
  reading what it will change and concurrent writers queue on ``busy_timeout`` instead of
  failing with "database is locked"; plain ``BEGIN`` (deferred) for reads, which WAL never blocks.
* PostgreSQL: READ COMMITTED; writers lock the rows they depend on (``FOR SHARE`` /
  ``FOR UPDATE``) inside their transaction.

A :class:`Database` is safe to share between threads: each transaction checks a connection out
of the engine's pool. In-memory SQLite (``sqlite://``) uses one shared connection and is only
fit for single-threaded use.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    IntegrityError,
    NoSuchModuleError,
    SQLAlchemyError,
    StatementError,
)
from sqlalchemy.pool import StaticPool

from graveler.core import config
from graveler.core.errors import AlreadyExists, GravelerError, InvalidArgument, StorageError
from graveler.storage.refs.changes import ChangeMarker, local_only, sqlite_marker
from graveler.storage.refs.sqlite_conn import (
    ThreadConnections,
    describe,
    write_transaction,
)
from graveler.storage.refs.sqlite_conn import (
    is_unique_violation as _sqlite_unique,
)

#: Execution option read by the SQLite ``begin`` hook: "DEFERRED" or "IMMEDIATE".
BEGIN_OPTION = "graveler_sqlite_begin"
#: Execution option read by the SQLite ``begin`` hook: the ``synchronous`` level of a write.
SYNC_OPTION = "graveler_sqlite_synchronous"

SUPPORTED_DIALECTS = ("sqlite", "postgresql")

# Page cache per SQLite connection (default 2 MiB). Bulk staging inserts keys in random order
# into a b-tree larger than the cache; a bigger cache cut its time by about a third here.
SQLITE_CACHE_KIB = 32 * 1024


class Database:
    """An engine configured for graveler plus ``read()`` / ``write()`` transaction scopes."""

    def __init__(self, url: str, *, busy_timeout: float = 30.0) -> None:
        """Open (lazily connect) the database at ``url``.

        Raises InvalidArgument for a malformed URL or a backend other than SQLite / PostgreSQL.
        """
        try:
            parsed = make_url(url)
        except (ArgumentError, ValueError, TypeError) as exc:
            # not chained: the cause may quote the URL, password included
            raise InvalidArgument(f"invalid database URL {redact_url(url)}: {exc}") from None
        self.dialect = parsed.get_backend_name()
        if self.dialect not in SUPPORTED_DIALECTS:
            raise InvalidArgument(
                f"unsupported database {self.dialect!r} (supported: sqlite, postgresql)"
            )
        try:
            if self.dialect == "sqlite":
                self.engine = _sqlite_engine(url, busy_timeout)
            else:
                self.engine = create_engine(url, pool_pre_ping=True)
        except (ArgumentError, NoSuchModuleError, ImportError, ValueError, TypeError) as exc:
            hint = " (needs: pip install 'graveler[postgres]')" if self.is_postgres else ""
            raise InvalidArgument(
                f"cannot open database URL {redact_url(url)}: {exc}{hint}"
            ) from None
        self._writer = self.engine.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
        self._relaxed = self.engine.execution_options(
            **{BEGIN_OPTION: "IMMEDIATE", SYNC_OPTION: "NORMAL"}
        )
        #: Write transactions this object has ended (committed or not): with
        #: :meth:`changes`, what tells caches that something may have changed.
        self.local_writes = 0
        self._sqlite_path = _sqlite_file(parsed.database) if self.dialect == "sqlite" else None
        self._busy_timeout = busy_timeout
        self._changes: ChangeMarker | None = None
        self._changes_lock = threading.Lock()
        path = self._sqlite_path
        self._direct = None if path is None else ThreadConnections(path, busy_timeout)

    @property
    def is_postgres(self) -> bool:
        return self.dialect == "postgresql"

    @contextmanager
    def read(self, what: str) -> Iterator[Connection]:
        """A read transaction; database errors become StorageError mentioning ``what``."""
        with translate_errors(what), self.engine.begin() as conn:
            yield conn

    @contextmanager
    def write(
        self, what: str, *, duplicate: str | None = None, durable: bool = True
    ) -> Iterator[Connection]:
        """A write transaction (SQLite: ``BEGIN IMMEDIATE``), committed when the block exits
        normally and rolled back otherwise. A unique-constraint violation becomes
        ``AlreadyExists(duplicate)`` when ``duplicate`` is given.

        ``durable=False`` (SQLite only; staging writes) commits with ``synchronous=NORMAL``:
        the WAL is written but not fsynced, so the transaction survives a crash of the
        process at once, and a power loss from the next durable transaction (or WAL
        checkpoint) on, which fsyncs the WAL with everything before it. Every other write is
        ``synchronous=FULL``: durable when it returns. Either way the database stays
        consistent."""
        engine = self._writer if durable else self._relaxed
        try:
            with translate_errors(what, duplicate=duplicate), engine.begin() as conn:
                yield conn
        finally:
            self.local_writes += 1

    def direct_connection(self) -> sqlite3.Connection | None:
        """The calling thread's own SQLite connection outside the pool
        (:class:`graveler.storage.refs.sqlite_conn.ThreadConnections`, ``synchronous=NORMAL``), for
        the few statements that skip SQLAlchemy (:mod:`graveler.storage.refs.sqlite_stage`,
        :mod:`graveler.storage.refs.sqlite_branch`); None for in-memory SQLite and PostgreSQL.
        Closed by :meth:`close` or when its thread ends."""
        return None if self._direct is None else self._direct.get()

    @contextmanager
    def direct_transaction(
        self, what: str, *, write: bool = True, durable: bool = False
    ) -> Iterator[sqlite3.Connection]:
        """The calling thread's :meth:`direct_connection` (which must exist) for statements
        that skip SQLAlchemy, errors translated as :meth:`write` does. ``write``: inside
        ``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back when the block raises), with
        ``synchronous=FULL`` when ``durable`` (else ``NORMAL``, as staging writes are); not
        ``write``: no transaction of its own (each statement sees its own snapshot)."""
        conn = self.direct_connection()
        if conn is None:
            raise AssertionError("direct transactions need a SQLite database file")
        with translate_errors(what):
            if not write:
                yield conn
                return
            try:
                with write_transaction(conn, durable=durable):
                    yield conn
            finally:
                self.local_writes += 1

    def changes(self) -> ChangeMarker | None:
        """SQLite: the marker of commits by other connections and processes
        (:mod:`graveler.storage.refs.changes`), opened on first use; None on PostgreSQL, where
        nothing is cached."""
        if self.is_postgres:
            return None
        with self._changes_lock:
            if self._changes is None:
                if self._sqlite_path is None:
                    self._changes = local_only()
                else:
                    self._changes = sqlite_marker(self._sqlite_path, self._busy_timeout)
            return self._changes

    def close(self) -> None:
        """Close every pooled connection. The object must not be used afterwards. The change
        marker closes last (see :meth:`graveler.storage.refs.sqlite_db.SqliteDatabase.close`)."""
        if self._direct is not None:
            self._direct.close()
        self.engine.dispose()
        if self._changes is not None:
            self._changes.close()


def _sqlite_file(database: str | None) -> str | None:
    """The absolute path (or ``file:`` URI) of a SQLite database, None when in memory."""
    if database in (None, "", ":memory:") or "mode=memory" in database:
        return None
    return database if database.startswith("file:") else os.path.abspath(database)


def redact_url(url: object) -> str:
    """``url`` fit for a message: rendered with SQLAlchemy's password hiding
    (``render_as_string(hide_password=True)``), then :func:`graveler.core.config.redact_url` for
    ``password=``-style query values and for text SQLAlchemy cannot parse (a bad port) or
    would split wrongly (an unencoded ``@`` in the password)."""
    text = str(url)
    if text.count("@") <= 1:
        with suppress(ArgumentError, ValueError, TypeError):
            text = make_url(text).render_as_string(hide_password=True)
    return config.redact_url(text)


def _sqlite_engine(url: str, busy_timeout: float) -> Engine:
    parsed = make_url(url)
    in_memory = parsed.database in (None, "", ":memory:")
    if not in_memory and parsed.database and not parsed.database.startswith("file:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)  # e.g. .graveler/
    kwargs: dict[str, Any] = {"connect_args": {"timeout": busy_timeout}}
    if in_memory:
        kwargs["poolclass"] = StaticPool
        kwargs["connect_args"]["check_same_thread"] = False
    engine = create_engine(url, **kwargs)
    timeout_ms = int(busy_timeout * 1000)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see module docstring)
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {timeout_ms}")
            if not in_memory:
                cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        options = conn.get_execution_options()
        mode = options.get(BEGIN_OPTION, "DEFERRED")
        if mode == "IMMEDIATE":
            sync = options.get(SYNC_OPTION, "FULL")
            if conn.info.get(SYNC_OPTION) != sync:  # per connection, outside transactions
                conn.exec_driver_sql(f"PRAGMA synchronous = {sync}")
                conn.info[SYNC_OPTION] = sync
        conn.exec_driver_sql(f"BEGIN {mode}")

    return engine


@contextmanager
def translate_errors(what: str, *, duplicate: str | None = None) -> Iterator[None]:
    """Re-raise SQLAlchemy and driver exceptions as GravelerErrors (``raise X from exc``).

    GravelerErrors raised inside the block pass through unchanged.
    """
    try:
        yield
    except GravelerError:
        raise
    except SQLAlchemyError as exc:
        raise _translate(exc, what, duplicate) from exc
    except sqlite3.Error as exc:  # raised by the driver outside SQLAlchemy's wrapping
        raise StorageError(f"{what}: sqlite error: {exc}") from exc
    except (OverflowError, UnicodeEncodeError) as exc:  # a driver could not bind a parameter
        raise InvalidArgument(f"{what}: cannot be stored or looked up: {exc}") from exc


def _translate(exc: SQLAlchemyError, what: str, duplicate: str | None) -> GravelerError:
    if isinstance(exc, IntegrityError):
        if duplicate is not None and is_unique_violation(exc):
            return AlreadyExists(duplicate)
        return StorageError(f"{what}: integrity error: {_reason(exc)}")
    orig = exc.orig if isinstance(exc, StatementError) else None
    if not isinstance(exc, DBAPIError) and isinstance(orig, ValueError | TypeError):
        return InvalidArgument(f"{what}: {orig}")  # refused by a bind processor
    return StorageError(f"{what}: {_describe(exc)}")


def is_unique_violation(exc: IntegrityError) -> bool:
    """True when ``exc`` reports a primary-key / unique violation (not a foreign key)."""
    orig = exc.orig
    if getattr(orig, "sqlstate", None) == "23505":  # PostgreSQL unique_violation
        return True
    return orig is not None and _sqlite_unique(orig)


def _reason(exc: DBAPIError) -> str:
    return str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)


def _describe(exc: SQLAlchemyError) -> str:
    """A one-line explanation of a database failure, with a hint where one helps."""
    if not isinstance(exc, DBAPIError):
        return f"database error: {exc}"
    reason = _reason(exc)
    sqlstate = getattr(exc.orig, "sqlstate", None)
    if exc.connection_invalidated or (sqlstate or "").startswith("08"):
        return f"lost or could not open the database connection ({reason})"
    return describe(reason, sqlstate)
