"""PostgreSQL fast path of ``stage`` for large chunks: binary ``COPY`` into a session-local
temporary table, then one ``INSERT ... SELECT ... ON CONFLICT (token, key) DO UPDATE``.

Measured here on 200,000 scrambled ~190-byte entries it is about 1.6x faster than psycopg's
pipelined executemany of the same upsert, because rows travel in one binary stream instead of
one Bind/Execute message each. Small chunks keep using executemany, which needs no temp table.

The temp table is created ``IF NOT EXISTS`` inside the calling transaction (so it also works
behind a transaction-pooling proxy) with ``ON COMMIT DELETE ROWS``, and emptied after each chunk.
"""

from __future__ import annotations

from sqlalchemy import Column, Connection, LargeBinary, MetaData, Table, bindparam, select
from sqlalchemy.dialects import postgresql

from graveler.core.errors import StorageError
from graveler.core.model import StagedEntry
from graveler.storage.refs.schema import name_type, staged_entries

#: Chunks with at least this many distinct keys go through COPY.
COPY_MIN_ROWS = 1_000

_buffer = Table(
    "graveler_stage_buffer",
    MetaData(),
    Column("key", LargeBinary, nullable=False),
    Column("identity", LargeBinary),
    Column("value", LargeBinary),
)

_CREATE = (
    "CREATE TEMPORARY TABLE IF NOT EXISTS graveler_stage_buffer "
    "(key BYTEA NOT NULL, identity BYTEA, value BYTEA) ON COMMIT DELETE ROWS"
)
_COPY = "COPY graveler_stage_buffer (key, identity, value) FROM STDIN (FORMAT BINARY)"


def _merge_statement() -> postgresql.Insert:
    source = select(
        bindparam("staging_token", type_=name_type()).label("token"),
        _buffer.c.key,
        _buffer.c.identity,
        _buffer.c.value,
    ).order_by(_buffer.c.key)  # a stable row-lock order, like executemany's sorted chunks
    stmt = postgresql.insert(staged_entries).from_select(
        ["token", "key", "identity", "value"], source
    )
    return stmt.on_conflict_do_update(
        index_elements=[staged_entries.c.token, staged_entries.c.key],
        set_={"identity": stmt.excluded.identity, "value": stmt.excluded.value},
    )


_MERGE = _merge_statement()


def copy_upsert(conn: Connection, token: str, chunk: list[StagedEntry]) -> None:
    """Upsert ``chunk`` (distinct keys) under ``token`` within ``conn``'s transaction."""
    conn.exec_driver_sql(_CREATE)
    driver = conn.connection.driver_connection
    assert driver is not None
    try:
        with driver.cursor() as cursor, cursor.copy(_COPY) as copy:
            copy.set_types(["bytea", "bytea", "bytea"])
            for entry in chunk:
                copy.write_row((entry.key, entry.identity, entry.value))
    except conn.dialect.loaded_dbapi.Error as exc:
        raise StorageError(f"stage: COPY into the staging buffer failed: {exc}") from exc
    conn.execute(_MERGE, {"staging_token": token})
    conn.exec_driver_sql("TRUNCATE graveler_stage_buffer")
