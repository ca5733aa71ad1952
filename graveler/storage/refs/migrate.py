"""Programmatic Alembic migrations of the refs schema (no ``alembic.ini`` needed).

The scripts ship inside the package (``graveler/storage/refs/migrations/``); the version table is
``graveler_alembic_version``. :func:`upgrade` is idempotent and safe to run from several
processes at once: on SQLite it runs inside one ``BEGIN IMMEDIATE`` transaction, on PostgreSQL
inside one transaction that first takes a transaction-scoped advisory lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import SQLAlchemyError

from graveler.core.errors import StorageError
from graveler.storage.refs.db import BEGIN_OPTION, Database
from graveler.storage.refs.revision import HEAD_REVISION as HEAD_REVISION
from graveler.storage.refs.schema import VERSION_TABLE

if TYPE_CHECKING:
    from alembic.config import Config


#: Where the migration scripts live (inside the installed package).
SCRIPT_LOCATION = str(Path(__file__).with_name("migrations"))

# Key of pg_advisory_xact_lock serialising concurrent upgrades (arbitrary, fixed: "gravlrmg").
_PG_LOCK_KEY = 0x677261766C726D67


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic Config for the graveler scripts, optionally bound to an open connection."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest revision shipped with this build."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def upgrade(engine_or_url: Engine | Database | str, revision: str = "head") -> None:
    """Bring the schema up to ``revision`` (default: the newest). A no-op when already there.

    Raises StorageError when the database cannot be reached or the migration fails.
    """
    db, owned = _database(engine_or_url)
    try:
        if revision == "head" and _recorded_revision(db) == HEAD_REVISION:
            return
        _migrate(db, revision)
    finally:
        if owned:
            db.close()


def _migrate(db: Database, revision: str) -> None:
    """Run the scripts up to ``revision`` in one write transaction of ``db``; Alembic's own
    errors (a recorded revision this build does not know) become StorageError."""
    from alembic.util import CommandError

    try:
        with db.write("migrate the graveler schema") as conn:
            upgrade_connection(conn, revision)
    except CommandError as exc:
        raise StorageError(
            f"migrate the graveler schema: {exc} (this build's newest revision is "
            f"{HEAD_REVISION}: was the database written by a newer graveler?)"
        ) from exc


def upgrade_connection(conn: Connection, revision: str = "head") -> None:
    """Bring the schema up to ``revision`` through a caller's open connection, inside the
    caller's transaction: the caller commits (or rolls back) it.

    This is how a host application that owns the database (Airflow's ``airflow db migrate``)
    runs graveler's migrations in its own session. On PostgreSQL it first takes the same
    transaction-scoped advisory lock as :func:`upgrade`, so concurrent upgrades serialise.
    """
    from alembic import command

    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
    command.upgrade(alembic_config(conn), revision)


def current_revision(engine_or_url: Engine | Database | str) -> str | None:
    """The revision recorded in ``graveler_alembic_version``, or None for an empty database."""
    db, owned = _database(engine_or_url)
    try:
        from alembic.runtime.migration import MigrationContext

        with db.read("read the graveler schema version") as conn:
            context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
            return context.get_current_revision()
    finally:
        if owned:
            db.close()


def _recorded_revision(db: Database) -> str | None:
    """The version row read with plain SQL, or None when there is no (readable) version table."""
    try:
        with db.engine.connect() as conn:
            row = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).first()
    except SQLAlchemyError:
        return None
    return None if row is None else str(row[0])


def _database(engine_or_url: Engine | Database | str) -> tuple[Database, bool]:
    """A Database for the argument and whether the caller must close it."""
    if isinstance(engine_or_url, Database):
        return engine_or_url, False
    if isinstance(engine_or_url, str):
        return Database(engine_or_url), True
    return _EngineDatabase(engine_or_url), False


class _EngineDatabase(Database):
    """Wraps a caller's engine (which it does not own or reconfigure)."""

    def __init__(self, engine: Engine) -> None:
        self.dialect = engine.dialect.name
        self.engine = engine
        # Takes effect only if the engine has graveler's SQLite begin hook; harmless otherwise.
        self._writer = self._relaxed = engine.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
        self.local_writes = 0
        self._changes = None

    def close(self) -> None:
        pass
