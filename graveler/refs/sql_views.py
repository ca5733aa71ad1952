"""Branch views over SQL: a branch row and its staged entries, read together, cached on SQLite.

A view is read in one transaction: the branch row with a flag saying whether its current
token holds anything (one statement), then, when something is staged and the view is to be
cached, up to :data:`STAGED_IN_MEMORY` staged entries of all its tokens. A view holding them
all answers lookups and listings from memory; a bigger staging area is looked up per key
(answers remembered for the view's life) and listed with keyset queries.

On SQLite, :class:`ViewCache` keeps the last view of each branch together with the
database's change stamp (:mod:`graveler.refs.changes`) taken *before* it was read. A view is
handed out again only while the stamp is unchanged, that is while no connection of any
process has committed anything since; otherwise it is read afresh. So a read by branch name
sees every write committed before it started, whichever process made it, at the price of a
memory read when nothing changed. PostgreSQL views are read on every call (one statement for
a branch with nothing staged).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence

from sqlalchemy import exists, select

from graveler.errors import BranchNotFound
from graveler.model import Branch, StagedEntry
from graveler.refs import rows, sqlite_branch
from graveler.refs.db import Database
from graveler.refs.port import IterStaged, merge_tokens
from graveler.refs.schema import branches, staged_entries

#: A cached view holds up to this many staged entries in memory (more: looked up per key).
STAGED_IN_MEMORY = 10_000
#: Per-key answers a view remembers when its staging is too big to hold.
MEMO_LIMIT = 10_000
#: Branch views kept per store (the cache is emptied when it would grow past this).
VIEW_CACHE_SIZE = 256


class SqlBranchView:
    """One read of a branch (see :class:`graveler.refs.port.BranchView`)."""

    __slots__ = ("_db", "_entries", "_iter", "_keys", "_memo", "_tokens", "branch", "clean")

    def __init__(
        self,
        branch: Branch,
        db: Database,
        iter_staged: IterStaged,
        entries: dict[bytes, StagedEntry] | None,
        *,
        clean: bool,
    ) -> None:
        self.branch = branch
        self.clean = clean
        self._tokens = branch.tokens
        self._db = db
        self._iter = iter_staged
        self._entries = entries
        self._keys: list[bytes] | None = None
        self._memo: dict[bytes, StagedEntry | None] = {}

    def lookup(self, key: bytes) -> StagedEntry | None:
        if self.clean:
            return None
        if self._entries is not None:
            return self._entries.get(key)
        memo = self._memo
        if key in memo:
            return memo[key]
        found = _lookup(self._db, self._tokens, key)
        if len(memo) < MEMO_LIMIT:
            memo[key] = found
        return found

    def iter_staged(self, start: bytes = b"", prefix: bytes = b"") -> Iterator[StagedEntry]:
        if self.clean:
            return iter(())
        if self._entries is None:
            return merge_tokens(self._iter, self._tokens, start, prefix)
        return self._iter_memory(max(start, prefix), prefix)

    def _iter_memory(self, lower: bytes, prefix: bytes) -> Iterator[StagedEntry]:
        assert self._entries is not None
        if self._keys is None:
            self._keys = sorted(self._entries)
        keys, entries = self._keys, self._entries
        for i in range(bisect_left(keys, lower), len(keys)):
            if not keys[i].startswith(prefix):
                return
            yield entries[keys[i]]


def read_view(
    db: Database, iter_staged: IterStaged, repo: str, name: str, eager: int
) -> SqlBranchView:
    """Read a branch view in one transaction, loading up to ``eager`` staged entries into
    memory when that is all of them. Raises BranchNotFound."""
    if not eager and db.direct_connection() is not None:
        branch, has_entries = sqlite_branch.get_branch_and_dirt(db, repo, name)
        clean = not has_entries and not branch.sealed_tokens
        return SqlBranchView(branch, db, iter_staged, None, clean=clean)
    dirty = exists().where(staged_entries.c.token == branches.c.staging_token)
    query = select(branches, dirty.label("dirty")).where(
        branches.c.repo == repo, branches.c.name == name
    )
    with db.read(f"read branch {name!r}") as conn:
        row = conn.execute(query).first()
        if row is None:
            raise BranchNotFound(f"branch {name!r} not found in repository {repo!r}")
        branch = rows.to_branch(row)
        if not row.dirty and not branch.sealed_tokens:
            return SqlBranchView(branch, db, iter_staged, None, clean=True)
        if not eager:
            return SqlBranchView(branch, db, iter_staged, None, clean=False)
        tokens = branch.tokens
        found = conn.execute(
            select(
                staged_entries.c.token,
                staged_entries.c.key,
                staged_entries.c.identity,
                staged_entries.c.value,
            )
            .where(staged_entries.c.token.in_(tokens))
            .limit(eager + 1)
        ).all()
    entries = _winners(tokens, [tuple(r) for r in found]) if len(found) <= eager else None
    return SqlBranchView(branch, db, iter_staged, entries, clean=not found)


class ViewCache:
    """The last view of each branch with the change stamp taken before it was read (SQLite;
    see the module docstring). Thread-safe: entries are replaced whole."""

    def __init__(self, db: Database, iter_staged: IterStaged) -> None:
        self._db = db
        self._iter = iter_staged
        self._views: dict[tuple[str, str], tuple[object, int, SqlBranchView]] = {}
        self._probe: Callable[[], object] | None = None

    def get(self, repo: str, name: str, *, eager: bool = True) -> SqlBranchView:
        """The branch's view: the cached one while nothing changed, else read again (and
        kept, with up to STAGED_IN_MEMORY entries loaded). Not ``eager``: a view that is
        not cached is read without its entries and not kept."""
        probe = self._probe
        if probe is None:
            marker = self._db.changes()
            if marker is None:
                return read_view(self._db, self._iter, repo, name, eager=0)
            probe = self._probe = marker.probe
        stamp, local = probe(), self._db.local_writes
        hit = self._views.get((repo, name))
        if hit is not None and hit[1] == local and hit[0] == stamp:
            return hit[2]
        if not eager:
            return read_view(self._db, self._iter, repo, name, eager=0)
        view = read_view(self._db, self._iter, repo, name, eager=STAGED_IN_MEMORY)
        if len(self._views) >= VIEW_CACHE_SIZE:
            self._views.clear()
        self._views[(repo, name)] = (stamp, local, view)
        return view


Row = tuple[str, bytes, bytes | None, bytes | None]


def _winners(tokens: Sequence[str], found: Sequence[Row]) -> dict[bytes, StagedEntry]:
    """The winning entry per key among ``(token, key, identity, value)`` rows."""
    rank = {token: i for i, token in enumerate(tokens)}
    best: dict[bytes, tuple[int, StagedEntry]] = {}
    for token, key, identity, value in found:
        r = rank[token]
        held = best.get(key)
        if held is None or r < held[0]:
            best[key] = (r, StagedEntry(key, identity, value))
    return {key: entry for key, (_, entry) in best.items()}


def _lookup(db: Database, tokens: Sequence[str], key: bytes) -> StagedEntry | None:
    query = select(staged_entries.c.token, staged_entries.c.identity, staged_entries.c.value).where(
        staged_entries.c.token.in_(tokens), staged_entries.c.key == key
    )
    with db.read("look up a staged entry") as conn:
        found = conn.execute(query).all()
    winners = _winners(tokens, [(t, key, i, v) for t, i, v in found])
    return winners.get(key)
