"""The SQL metadata store: one object implementing both
:class:`~graveler.storage.refs.port.RefStore` and :class:`~graveler.storage.refs.port.StagingStore`
over SQLite (embedded default, WAL) or PostgreSQL (psycopg 3), through SQLAlchemy Core.

>>> store = SqlMetadataStore("sqlite:///.graveler/refs.db")          # doctest: +SKIP
>>> store = SqlMetadataStore("postgresql+psycopg://u:p@host/db")     # doctest: +SKIP

The implementation is split by port: :mod:`graveler.storage.refs.sql_refs`,
:mod:`graveler.storage.refs.sql_staging`; connections, transactions and error translation live in
:mod:`graveler.storage.refs.db`, the schema in :mod:`graveler.storage.refs.schema`, migrations in
:mod:`graveler.storage.refs.migrate`.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from graveler.storage.refs.db import Database
from graveler.storage.refs.migrate import upgrade
from graveler.storage.refs.port import RefStore, StagingStore
from graveler.storage.refs.sql_hooks import SqlHookRunStore
from graveler.storage.refs.sql_refs import SqlRefStore
from graveler.storage.refs.sql_staging import SqlStagingStore
from graveler.storage.refs.stage_input import DEFAULT_CHUNK_SIZE


class SqlMetadataStore(SqlRefStore, SqlStagingStore, SqlHookRunStore):
    """RefStore + StagingStore (and the HookRunStore of graveler.versioning.hooks) on one SQL
    database; thread-safe (one engine, pooled connections). Use one instance per process; several
    processes may share the database.
    """

    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        busy_timeout: float = 30.0,
        stage_chunk_size: int = DEFAULT_CHUNK_SIZE,
    ) -> None:
        """Open the database at the SQLAlchemy ``url`` and, when ``migrate``, bring its schema
        up to date (idempotent, safe to race with other processes doing the same).

        ``busy_timeout`` (seconds) is how long a SQLite writer waits for the write lock.
        ``stage_chunk_size`` is how many distinct keys ``stage`` writes per statement.
        Raises InvalidArgument for a bad URL, StorageError when migrating fails."""
        db = Database(url, busy_timeout=busy_timeout)
        try:
            if migrate:
                upgrade(db)
            SqlRefStore.__init__(self, db)
            SqlStagingStore.__init__(self, db, chunk_size=stage_chunk_size)
            SqlHookRunStore.__init__(self, db)
        except BaseException:
            db.close()
            raise

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._db.dialect

    def close(self) -> None:
        """Release every pooled connection; the store must not be used afterwards."""
        self._db.close()

    def __enter__(self) -> SqlMetadataStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


if TYPE_CHECKING:  # mypy proves that the class satisfies both ports

    def _conforms(store: SqlMetadataStore) -> tuple[RefStore, StagingStore]:
        return store, store
