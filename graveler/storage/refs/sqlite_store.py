"""The embedded refs and staging store: SQLite through the standard library's ``sqlite3``.

:class:`SqliteMetadataStore` implements :class:`~graveler.storage.refs.port.RefStore`,
:class:`~graveler.storage.refs.port.StagingStore` and
:class:`~graveler.core.hookevents.HookRunStore` over the same tables, schema and transaction
discipline as the SQLAlchemy store (:class:`graveler.storage.refs.sql.SqlMetadataStore`), and passes
the same conformance suite (``tests/refs``): the two can open one database file side by side. It
exists because importing SQLAlchemy costs several times what Python's own start-up does, which every
call of the command line would pay.

The schema is still created and migrated by Alembic through SQLAlchemy: when the file is
missing or its recorded revision is not this build's (:data:`graveler.storage.refs.revision.
HEAD_REVISION`), opening the store runs :func:`graveler.storage.refs.migrate.upgrade` first (which
imports them), then goes on without them.

>>> store = SqliteMetadataStore(".graveler/graveler.db")         # doctest: +SKIP
>>> store = SqliteMetadataStore("sqlite:///.graveler/graveler.db")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import TYPE_CHECKING

from graveler.core.errors import InvalidArgument
from graveler.storage.refs.revision import HEAD_REVISION
from graveler.storage.refs.sqlite_db import SqliteDatabase, plain_sqlite_path, schema_revision
from graveler.storage.refs.sqlite_refs import SqliteRefStore
from graveler.storage.refs.sqlite_staging import SqliteHookRunStore, SqliteStagingStore
from graveler.storage.refs.stage_input import DEFAULT_CHUNK_SIZE

if TYPE_CHECKING:
    from graveler.core.hookevents import HookRunStore
    from graveler.storage.refs.port import RefStore, StagingStore


class SqliteMetadataStore(SqliteRefStore, SqliteStagingStore, SqliteHookRunStore):
    """RefStore + StagingStore + HookRunStore on one SQLite file; thread-safe (a connection
    per thread). Several processes (and SQLAlchemy stores) may share the file."""

    dialect = "sqlite"

    def __init__(
        self,
        location: str | os.PathLike[str],
        *,
        migrate: bool = True,
        busy_timeout: float = 30.0,
        stage_chunk_size: int = DEFAULT_CHUNK_SIZE,
    ) -> None:
        """Open the SQLite database at ``location`` (a path, or a ``sqlite:///PATH`` URL)
        and, when ``migrate``, bring its schema to this build's revision first (see the
        module docstring; idempotent, safe to race with other processes doing the same).

        ``busy_timeout`` (seconds) is how long a writer waits for the write lock;
        ``stage_chunk_size`` how many distinct keys ``stage`` writes per statement. Raises
        InvalidArgument for a URL that is not a plain SQLite file, StorageError when
        migrating fails."""
        path = database_path(location)
        if migrate:
            ensure_schema(path, busy_timeout)
        db = SqliteDatabase(path, busy_timeout=busy_timeout)
        SqliteRefStore.__init__(self, db)
        SqliteStagingStore.__init__(self, db, chunk_size=stage_chunk_size)
        SqliteHookRunStore.__init__(self, db)

    @property
    def path(self) -> str:
        """The database file."""
        return self._db.path

    def close(self) -> None:
        """Close every connection; the store must not be used afterwards."""
        self._db.close()

    def __enter__(self) -> SqliteMetadataStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def database_path(location: str | os.PathLike[str]) -> str:
    """The absolute path a path or ``sqlite:///PATH`` URL names; InvalidArgument for any
    other URL."""
    text = os.fspath(location)
    if "://" not in text:
        return os.path.abspath(text)
    path = plain_sqlite_path(text)
    if path is None:
        raise InvalidArgument(
            "the embedded store opens a SQLite file (sqlite:///PATH); use "
            "graveler.storage.refs.sql.SqlMetadataStore for other database URLs"
        )
    return path


def ensure_schema(path: str, busy_timeout: float = 30.0) -> None:
    """Make the schema of the SQLite file at ``path`` this build's (created when missing),
    through Alembic when it is not already at :data:`HEAD_REVISION`. Raises StorageError when
    migrating fails (a schema newer than this build, for one)."""
    if schema_revision(path) == HEAD_REVISION:
        return
    from graveler.storage.refs.db import Database
    from graveler.storage.refs.migrate import upgrade

    db = Database(f"sqlite:///{path}", busy_timeout=busy_timeout)
    try:
        upgrade(db)
    finally:
        db.close()


if TYPE_CHECKING:  # mypy proves that the class satisfies the ports

    def _conforms(store: SqliteMetadataStore) -> tuple[RefStore, StagingStore, HookRunStore]:
        return store, store, store
