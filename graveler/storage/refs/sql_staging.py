"""StagingStore over SQL (see :class:`graveler.storage.refs.port.StagingStore` for the contracts).

Staged entries live in ``graveler_staged_entries`` keyed by (token, key); keys are binary and
sort bytewise on both backends. ``stage`` holds the branch row (``FOR SHARE`` on PostgreSQL,
the ``BEGIN IMMEDIATE`` write lock on SQLite) for its whole transaction, so the token it
resolves cannot be sealed until its entries are committed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import Connection, delete, func, select
from sqlalchemy.dialects import postgresql, sqlite

from graveler.core.errors import BranchNotFound, InvalidArgument, WriteToProtectedBranch
from graveler.core.keyspace import successor
from graveler.core.model import StagedEntry
from graveler.storage.refs import rows, sqlite_branch, sqlite_stage
from graveler.storage.refs.branch_views import StagedView
from graveler.storage.refs.db import Database
from graveler.storage.refs.pg_copy import COPY_MIN_ROWS, copy_upsert
from graveler.storage.refs.schema import branches, staged_entries
from graveler.storage.refs.sql_views import view_cache
from graveler.storage.refs.stage_input import (
    DEFAULT_CHUNK_SIZE,
    check_chunk_size,
    check_entry,
    chunks,
    few,
)

_IN_CHUNK = 500  # tokens per IN (...) list


class SqlStagingStore:
    """Per-token staging areas in ``graveler_staged_entries``."""

    def __init__(self, db: Database, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> None:
        self._db = db
        self._chunk_size = check_chunk_size(chunk_size)
        self._upsert = _Upsert(db)
        self._views = view_cache(
            db, lambda token, start, prefix: self.iter_staged(token, start, prefix)
        )

    def branch_view(self, repo: str, branch: str, *, entries: bool = True) -> StagedView:
        """The branch row and its staged entries, read together (see
        :mod:`graveler.storage.refs.branch_views`; cached on SQLite while nothing is committed).
        With ``entries=False`` a view not cached is read without loading its entries (and not
        kept): what a commit needs before it seals. Raises BranchNotFound."""
        return self._views.get(repo, branch, eager=entries)

    def stage(
        self,
        repo: str,
        branch: str,
        entries: Iterable[StagedEntry],
        *,
        before_commit: Callable[[], object] | None = None,
        check: Callable[[], object] | None = None,
    ) -> str:
        """Write ``entries`` under the branch's current staging token in one transaction and
        return the token. Last write per key wins, within the call and against earlier calls.

        ``entries`` may be a generator of any length: it is consumed in chunks of
        ``chunk_size`` distinct keys, so memory stays bounded. Each chunk is one upsert
        ``INSERT ... ON CONFLICT (token, key) DO UPDATE``: an executemany of the statement
        compiled once by SQLAlchemy (run with plain tuples / dicts, skipping per-row type
        processing, which halves its cost), or on PostgreSQL for chunks of at least
        ``COPY_MIN_ROWS`` keys a binary COPY plus one upsert (:mod:`graveler.storage.refs.pg_copy`).

        On SQLite the whole call holds the database write lock (other writers wait up to
        ``busy_timeout``) and commits with ``synchronous=NORMAL`` (durable at once against a
        crash of the process, against a power loss from the next commit of the branch on:
        see :meth:`graveler.storage.refs.db.Database.write`); on PostgreSQL it holds the branch row
        ``FOR SHARE``, delaying only ``update_branch`` / ``delete_branch`` of that branch.

        Raises BranchNotFound, ProtectedBranch (the branch refuses writes: checked in the
        same transaction, so a concurrent ``protect`` is either before or after the whole
        call); InvalidArgument for a key, identity or value that is not bytes (nothing is
        written then). ``before_commit`` runs last inside the transaction (the caller waits
        there for the entries' bytes to be durable); ``check`` runs first, once the branch
        is locked (on PostgreSQL ``FOR UPDATE`` then, so conditional writers of a branch
        take turns; SQLite's write lock already serialises every writer)."""
        if few(entries) and sqlite_stage.AVAILABLE and self._db.direct_connection():
            for entry in entries:
                check_entry(entry)
            return sqlite_stage.stage_few(self._db, repo, branch, entries, before_commit, check)
        with self._db.write(f"stage on branch {branch!r} of {repo!r}", durable=False) as conn:
            token = _lock_staging_token(conn, repo, branch, exclusive=check is not None)
            if check is not None:
                check()
            for chunk in chunks(entries, self._chunk_size):
                if self._db.is_postgres and len(chunk) >= COPY_MIN_ROWS:
                    copy_upsert(conn, token, chunk)
                else:
                    conn.exec_driver_sql(self._upsert.sql, self._upsert.params(token, chunk))
            if before_commit is not None:
                before_commit()
        return token

    def get_staged(self, token: str, key: bytes) -> StagedEntry | None:
        """The entry staged for ``key`` under ``token`` (possibly a tombstone), or None."""
        query = select(staged_entries).where(
            staged_entries.c.token == token, staged_entries.c.key == key
        )
        with self._db.read("get staged entry") as conn:
            row = conn.execute(query).first()
        return None if row is None else rows.to_staged(row)

    def iter_staged(
        self, token: str, start: bytes = b"", prefix: bytes = b"", batch_size: int = 10_000
    ) -> Iterator[StagedEntry]:
        """Entries of ``token`` with key >= ``start`` and starting with ``prefix``, bytewise
        ascending. Keyset pagination: each batch is one ``key > last ORDER BY key LIMIT n``
        query in its own short transaction, so at most ``batch_size`` rows are held and no
        connection stays checked out between batches. Not a snapshot: entries written to the
        token while iterating may or may not be seen. Raises InvalidArgument (immediately)
        for a non-positive ``batch_size``."""
        if batch_size < 1:
            raise InvalidArgument(f"batch_size must be positive, got {batch_size}")
        return self._iter_staged(token, max(start, prefix), successor(prefix), batch_size)

    def _iter_staged(
        self, token: str, lower: bytes, upper: bytes | None, batch_size: int
    ) -> Iterator[StagedEntry]:
        key = staged_entries.c.key
        base = select(key, staged_entries.c.identity, staged_entries.c.value).where(
            staged_entries.c.token == token
        )
        if upper is not None:
            base = base.where(key < upper)
        query = base.where(key >= lower)
        while True:
            with self._db.read("iterate staged entries") as conn:
                page = conn.execute(query.order_by(key).limit(batch_size)).all()
            # Both drivers return BLOB / BYTEA as bytes: build entries positionally (fast).
            yield from (StagedEntry(k, i, v) for k, i, v in page)
            if len(page) < batch_size:
                return
            query = base.where(key > page[-1][0])

    def count_staged(self, token: str) -> int:
        """Number of entries (tombstones included) staged under ``token``."""
        query = (
            select(func.count()).select_from(staged_entries).where(staged_entries.c.token == token)
        )
        with self._db.read("count staged entries") as conn:
            return int(conn.execute(query).scalar_one())

    def drop_tokens(self, tokens: Sequence[str], prefix: bytes = b"") -> None:
        """Delete every entry of ``tokens`` (only keys starting with ``prefix`` when given),
        in one transaction (on SQLite with ``synchronous=NORMAL``, like ``stage``)."""
        if not prefix and self._db.direct_connection() is not None:
            sqlite_branch.drop_tokens(self._db, list(tokens))
            return
        with self._db.write("drop staging tokens", durable=False) as conn:
            delete_tokens(conn, list(tokens), prefix)


def delete_tokens(conn: Connection, tokens: list[str], prefix: bytes = b"") -> None:
    """Delete the staged entries of ``tokens`` (only keys starting with ``prefix``)."""
    key = staged_entries.c.key
    upper = successor(prefix)
    for start in range(0, len(tokens), _IN_CHUNK):
        stmt = delete(staged_entries).where(
            staged_entries.c.token.in_(tokens[start : start + _IN_CHUNK])
        )
        if prefix:
            stmt = stmt.where(key >= prefix)
        if upper is not None:
            stmt = stmt.where(key < upper)
        conn.execute(stmt)


def _lock_staging_token(
    conn: Connection, repo: str, branch: str, *, exclusive: bool = False
) -> str:
    """The branch's staging token, its row held ``FOR SHARE`` (``FOR UPDATE`` when
    ``exclusive``) on PostgreSQL until commit. Raises BranchNotFound, or ProtectedBranch
    when the branch refuses writes."""
    query = (
        select(branches.c.staging_token, branches.c.protected)
        .where(branches.c.repo == repo, branches.c.name == branch)
        .with_for_update(read=not exclusive)
    )
    row = conn.execute(query).first()
    if row is None:
        raise BranchNotFound(f"branch {branch!r} not found in repository {repo!r}")
    if row.protected:
        raise WriteToProtectedBranch(
            f"branch {branch!r} is protected: write to another branch and merge into it"
        )
    return str(row.staging_token)


class _Upsert:
    """``INSERT ... ON CONFLICT (token, key) DO UPDATE`` compiled for the database's dialect,
    with the matching parameter layout (tuples for SQLite's qmark style, dicts otherwise)."""

    def __init__(self, db: Database) -> None:
        insert = postgresql.insert if db.is_postgres else sqlite.insert
        stmt = insert(staged_entries)
        upsert = stmt.on_conflict_do_update(
            index_elements=[staged_entries.c.token, staged_entries.c.key],
            set_={"identity": stmt.excluded.identity, "value": stmt.excluded.value},
        )
        compiled = upsert.compile(dialect=db.engine.dialect)
        self.sql = compiled.string
        self._positional = compiled.positional
        if self._positional and list(compiled.positiontup or ()) != list(_COLUMNS):
            raise AssertionError(f"unexpected parameter order {compiled.positiontup}")

    def params(self, token: str, chunk: list[StagedEntry]) -> list[Any]:
        """Driver parameters for ``chunk``, all under ``token``."""
        if self._positional:
            return [(token, e.key, e.identity, e.value) for e in chunk]
        return [
            {"token": token, "key": e.key, "identity": e.identity, "value": e.value} for e in chunk
        ]


_COLUMNS = ("token", "key", "identity", "value")
