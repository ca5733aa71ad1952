"""Alembic environment for graveler's refs schema.

Run through :func:`graveler.storage.refs.migrate.upgrade`, which passes an open connection in
``config.attributes["connection"]``. Without one (the ``alembic`` command line with a
``sqlalchemy.url`` option), an engine is created from the URL. The version table is
``graveler_alembic_version`` so the schema can share a database with another Alembic user.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from graveler.storage.refs.schema import VERSION_TABLE, metadata


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        compare_type=True,
        **kwargs,  # type: ignore[arg-type]
    )


def _run_on(connection: Connection) -> None:
    _configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


def _run_online() -> None:
    connection = context.config.attributes.get("connection")
    if isinstance(connection, Connection):
        _run_on(connection)
        return
    url = context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("graveler migrations need a connection or a sqlalchemy.url option")
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            _run_on(conn)
    finally:
        engine.dispose()


def _run_offline() -> None:
    _configure(url=context.config.get_main_option("sqlalchemy.url"), literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    _run_offline()
else:
    _run_online()
