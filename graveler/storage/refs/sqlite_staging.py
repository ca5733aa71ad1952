"""StagingStore and HookRunStore on the embedded SQLite database through the standard library
(see :class:`graveler.storage.refs.port.StagingStore` for the contracts;
:mod:`graveler.storage.refs.sql_staging` is the same over SQLAlchemy, and the conformance suite runs
both).

``stage`` holds the database write lock (``BEGIN IMMEDIATE``) for its whole transaction, so the
token it resolves cannot be sealed until its entries are committed; a call of a few entries (a
put) is one statement per entry (:mod:`graveler.storage.refs.sqlite_stage`). Branch views are cached
while nothing is committed (:mod:`graveler.storage.refs.branch_views`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial

from graveler.core.errors import (
    BranchNotFound,
    InvalidArgument,
    NotFound,
    WriteToProtectedBranch,
)
from graveler.core.hookevents import HookRun
from graveler.core.keyspace import successor
from graveler.core.model import StagedEntry
from graveler.storage.refs import rows, sqlite_branch, sqlite_stage
from graveler.storage.refs.branch_views import StagedView, ViewCache, loaded_view, winners
from graveler.storage.refs.sqlite_conn import format_time
from graveler.storage.refs.sqlite_db import SqliteDatabase, marks, records
from graveler.storage.refs.sqlite_refs import delete_tokens
from graveler.storage.refs.stage_input import (
    DEFAULT_CHUNK_SIZE,
    check_chunk_size,
    check_entry,
    chunks,
    few,
)

_UPSERT = (
    "INSERT INTO graveler_staged_entries (token, key, identity, value) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (token, key) DO UPDATE SET identity = excluded.identity, value = excluded.value"
)
_TOKEN = "SELECT staging_token, protected FROM graveler_branches WHERE repo = ? AND name = ?"
_ENTRIES = "SELECT key, identity, value FROM graveler_staged_entries WHERE token = ?"
_HOOK_COLUMNS = (
    "repo",
    "run_id",
    "event",
    "status",
    "branch",
    "tag",
    "commit_id",
    "source_ref",
    "started",
    "ended",
    "hooks",
)
_HOOK_RUNS = f"SELECT {', '.join(_HOOK_COLUMNS)} FROM graveler_hook_runs"


class SqliteStagingStore:
    """Per-token staging areas in ``graveler_staged_entries``."""

    def __init__(self, db: SqliteDatabase, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> None:
        self._db = db
        self._chunk_size = check_chunk_size(chunk_size)
        self._views = ViewCache(db, self._read_view)

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
        return the token; last write per key wins. ``entries`` may be a generator of any
        length, consumed in chunks of ``chunk_size`` distinct keys (one executemany of the
        upsert each). Commits with ``synchronous=NORMAL``. Raises BranchNotFound,
        ProtectedBranch (checked in the same transaction), InvalidArgument for a key,
        identity or value that is not bytes (nothing is written then). ``check`` runs first
        inside the transaction, which holds the database write lock from its start (so
        conditional writers take turns, each seeing what the ones before it staged: its reads
        of this store on this thread run inside the transaction); ``before_commit`` runs
        last."""
        if few(entries) and sqlite_stage.AVAILABLE:
            for entry in entries:
                check_entry(entry)
            return sqlite_stage.stage_few(self._db, repo, branch, entries, before_commit, check)
        with self._db.write(f"stage on branch {branch!r} of {repo!r}", durable=False) as conn:
            row = conn.execute(_TOKEN, (repo, branch)).fetchone()
            if row is None:
                raise BranchNotFound(f"branch {branch!r} not found in repository {repo!r}")
            if row[1]:
                raise WriteToProtectedBranch(
                    f"branch {branch!r} is protected: write to another branch and merge into it"
                )
            if check is not None:
                check()
            token = str(row[0])
            for chunk in chunks(entries, self._chunk_size):
                conn.executemany(_UPSERT, [(token, e.key, e.identity, e.value) for e in chunk])
            if before_commit is not None:
                before_commit()
        return token

    def get_staged(self, token: str, key: bytes) -> StagedEntry | None:
        """The entry staged for ``key`` under ``token`` (possibly a tombstone), or None."""
        with self._db.statement("get staged entry") as conn:
            row = conn.execute(_ENTRIES + " AND key = ?", (token, key)).fetchone()
        return None if row is None else StagedEntry(*row)

    def iter_staged(
        self, token: str, start: bytes = b"", prefix: bytes = b"", batch_size: int = 10_000
    ) -> Iterator[StagedEntry]:
        """Entries of ``token`` with key >= ``start`` and starting with ``prefix``, bytewise
        ascending, read ``batch_size`` at a time (keyset pagination, each batch one
        statement: not a snapshot). Raises InvalidArgument (immediately) for a non-positive
        ``batch_size``."""
        if batch_size < 1:
            raise InvalidArgument(f"batch_size must be positive, got {batch_size}")
        return self._iter_staged(token, max(start, prefix), successor(prefix), batch_size)

    def _iter_staged(
        self, token: str, lower: bytes, upper: bytes | None, batch_size: int
    ) -> Iterator[StagedEntry]:
        bound = "" if upper is None else " AND key < ?"
        tail = () if upper is None else (upper,)
        query, after = _ENTRIES + " AND key >= ?" + bound + " ORDER BY key LIMIT ?", lower
        while True:
            with self._db.statement("iterate staged entries") as conn:
                page = conn.execute(query, (token, after, *tail, batch_size)).fetchall()
            yield from (StagedEntry(k, i, v) for k, i, v in page)
            if len(page) < batch_size:
                return
            query = _ENTRIES + " AND key > ?" + bound + " ORDER BY key LIMIT ?"
            after = page[-1][0]

    def count_staged(self, token: str) -> int:
        """Number of entries (tombstones included) staged under ``token``."""
        query = "SELECT count(*) FROM graveler_staged_entries WHERE token = ?"
        with self._db.statement("count staged entries") as conn:
            return int(conn.execute(query, (token,)).fetchone()[0])

    def branch_view(self, repo: str, branch: str, *, entries: bool = True) -> StagedView:
        """The branch row and its staged entries, read together (cached while nothing is
        committed; see :mod:`graveler.storage.refs.branch_views`). ``entries=False``: a view not
        cached is read without loading its entries. Raises BranchNotFound."""
        return self._views.get(repo, branch, eager=entries)

    def drop_tokens(self, tokens: Sequence[str], prefix: bytes = b"") -> None:
        """Delete every entry of ``tokens`` (only keys starting with ``prefix`` when given),
        in one transaction with ``synchronous=NORMAL``."""
        if not prefix:
            sqlite_branch.drop_tokens(self._db, list(tokens))
            return
        with self._db.write("drop staging tokens", durable=False) as conn:
            delete_tokens(conn, list(tokens), prefix)

    def _iterate(self, token: str, start: bytes, prefix: bytes) -> Iterator[StagedEntry]:
        return self.iter_staged(token, start, prefix)

    def _read_view(self, repo: str, name: str, eager: int) -> StagedView:
        """A view read now, in one snapshot, with up to ``eager`` entries loaded."""
        lookup = partial(_lookup, self._db)
        iterate = self._iterate
        if not eager:
            branch, dirty = sqlite_branch.get_branch_and_dirt(self._db, repo, name)
            clean = not dirty and not branch.sealed_tokens
            return StagedView(branch, lookup, iterate, None, clean=clean)
        with self._db.read(f"read branch {name!r}") as conn:
            branch, dirty = sqlite_branch.branch_and_dirt(conn, repo, name)
            if not dirty and not branch.sealed_tokens:
                return StagedView(branch, lookup, iterate, None, clean=True)
            tokens = branch.tokens
            query = (
                "SELECT token, key, identity, value FROM graveler_staged_entries "
                f"WHERE token IN ({marks(tokens)}) LIMIT ?"
            )
            found = conn.execute(query, (*tokens, eager + 1)).fetchall()
        return loaded_view(branch, lookup, iterate, found, eager)


def _lookup(db: SqliteDatabase, tokens: Sequence[str], key: bytes) -> StagedEntry | None:
    """The winning entry staged for ``key`` under ``tokens``, read now."""
    query = (
        "SELECT token, identity, value FROM graveler_staged_entries "
        f"WHERE token IN ({marks(tokens)}) AND key = ?"
    )
    with db.statement("look up a staged entry") as conn:
        found = conn.execute(query, (*tokens, key)).fetchall()
    return winners(tokens, [(t, key, i, v) for t, i, v in found]).get(key)


class SqliteHookRunStore:
    """Hook runs (:class:`graveler.core.hookevents.HookRunStore`) in ``graveler_hook_runs``."""

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    def add_hook_run(self, run: HookRun) -> None:
        """Insert a run (a StorageError when its repository is gone)."""
        values = rows.hook_run_row(run)
        values["started"], values["ended"] = format_time(run.started), format_time(run.ended)
        query = (
            f"INSERT INTO graveler_hook_runs ({', '.join(_HOOK_COLUMNS)}) "
            f"VALUES ({marks(_HOOK_COLUMNS)})"
        )
        with self._db.write(f"record hook run {run.run_id}") as conn:
            conn.execute(query, [values[c] for c in _HOOK_COLUMNS])

    def get_hook_run(self, repo: str, run_id: str) -> HookRun:
        """Raises NotFound."""
        with self._db.statement(f"get hook run {run_id!r}") as conn:
            found = records(
                conn.execute(f"{_HOOK_RUNS} WHERE repo = ? AND run_id = ?", (repo, run_id))
            )
        if not found:
            raise NotFound(f"hook run {run_id!r} not found in repository {repo!r}")
        return rows.to_hook_run(found[0])

    def list_hook_runs(
        self,
        repo: str,
        *,
        branch: str | None = None,
        commit_id: str | None = None,
        after: str | None = None,
        amount: int = 100,
    ) -> list[HookRun]:
        """Runs newest first, optionally of one branch or commit, after run ``after``."""
        query, params = f"{_HOOK_RUNS} WHERE repo = ?", [repo]
        for clause, value in (("branch = ?", branch), ("commit_id = ?", commit_id)):
            if value is not None:
                query, params = f"{query} AND {clause}", [*params, value]
        if after is not None:
            query, params = f"{query} AND run_id < ?", [*params, after]
        query += " ORDER BY run_id DESC LIMIT ?"
        with self._db.statement(f"list hook runs of {repo!r}") as conn:
            found = records(conn.execute(query, (*params, amount)))
        return [rows.to_hook_run(r) for r in found]
