"""Branch views: a branch row and its staged entries, read together, cached on SQLite.

A view is read in one transaction: the branch row with a flag saying whether its current
token holds anything (one statement), then, when something is staged and the view is to be
cached, up to :data:`STAGED_IN_MEMORY` staged entries of all its tokens. A view holding them
all answers lookups and listings from memory; a bigger staging area is looked up per key
(answers remembered for the view's life) and listed with keyset queries.

On SQLite, :class:`ViewCache` keeps the last view of each branch together with the
database's change stamp (:mod:`graveler.storage.refs.changes`) taken *before* it was read. A view is
handed out again only while the stamp is unchanged, that is while no connection of any
process has committed anything since; otherwise it is read afresh. So a read by branch name
sees every write committed before it started, whichever process made it, at the price of a
memory read when nothing changed. PostgreSQL views are read on every call (one statement for
a branch with nothing staged).

This module holds what both SQL stores share (the view, the winner rule, the cache); how a
view is read is theirs: :mod:`graveler.storage.refs.sql_views` (SQLAlchemy) and
:mod:`graveler.storage.refs.sqlite_staging` (the standard library's ``sqlite3``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from graveler.core.model import Branch, StagedEntry
from graveler.storage.refs.changes import ChangeMarker
from graveler.storage.refs.port import IterStaged, merge_tokens

#: A cached view holds up to this many staged entries in memory (more: looked up per key).
STAGED_IN_MEMORY = 10_000
#: Per-key answers a view remembers when its staging is too big to hold.
MEMO_LIMIT = 10_000
#: Branch views kept per store (the cache is emptied when it would grow past this).
VIEW_CACHE_SIZE = 256

#: ``lookup(tokens, key)``: the winning entry for ``key`` among the tokens, read now.
Lookup = Callable[[Sequence[str], bytes], "StagedEntry | None"]
#: ``(token, key, identity, value)`` rows of staged entries.
Row = tuple[str, bytes, bytes | None, bytes | None]


class StagedView:
    """One read of a branch (see :class:`graveler.storage.refs.port.BranchView`)."""

    __slots__ = ("_entries", "_iter", "_keys", "_lookup", "_memo", "_tokens", "branch", "clean")

    def __init__(
        self,
        branch: Branch,
        lookup: Lookup,
        iter_staged: IterStaged,
        entries: dict[bytes, StagedEntry] | None,
        *,
        clean: bool,
    ) -> None:
        self.branch = branch
        self.clean = clean
        self._tokens = branch.tokens
        self._lookup = lookup
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
        found = self._lookup(self._tokens, key)
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


def winners(tokens: Sequence[str], found: Sequence[Row]) -> dict[bytes, StagedEntry]:
    """The winning entry per key among ``(token, key, identity, value)`` rows: the entry of
    the earliest token in ``tokens`` (a branch's current token, then its sealed ones)."""
    rank = {token: i for i, token in enumerate(tokens)}
    best: dict[bytes, tuple[int, StagedEntry]] = {}
    for token, key, identity, value in found:
        r = rank[token]
        held = best.get(key)
        if held is None or r < held[0]:
            best[key] = (r, StagedEntry(key, identity, value))
    return {key: entry for key, (_, entry) in best.items()}


def loaded_view(
    branch: Branch,
    lookup: Lookup,
    iter_staged: IterStaged,
    found: Sequence[Row],
    eager: int,
) -> StagedView:
    """The view of ``branch`` given up to ``eager + 1`` of its staged rows: held in memory
    when they are all of them."""
    entries = winners(branch.tokens, found) if len(found) <= eager else None
    return StagedView(branch, lookup, iter_staged, entries, clean=not found)


class ChangeSource(Protocol):
    """What :class:`ViewCache` asks a database: its change marker and its own writes."""

    @property
    def local_writes(self) -> int: ...

    def changes(self) -> ChangeMarker | None: ...


#: ``read(repo, branch, eager)``: a view read now, with up to ``eager`` entries in memory
#: (0: none, and without reading them). Raises BranchNotFound.
ReadView = Callable[[str, str, int], StagedView]


class ViewCache:
    """The last view of each branch with the change stamp taken before it was read (SQLite;
    see the module docstring). Thread-safe: entries are replaced whole."""

    def __init__(self, db: ChangeSource, read: ReadView) -> None:
        self._db = db
        self._read = read
        self._views: dict[tuple[str, str], tuple[object, int, StagedView]] = {}
        self._probe: Callable[[], object] | None = None

    def get(self, repo: str, name: str, *, eager: bool = True) -> StagedView:
        """The branch's view: the cached one while nothing changed, else read again (and
        kept, with up to STAGED_IN_MEMORY entries loaded). Not ``eager``: a view that is
        not cached is read without its entries and not kept."""
        probe = self._probe
        if probe is None:
            marker = self._db.changes()
            if marker is None:
                return self._read(repo, name, 0)
            probe = self._probe = marker.probe
        stamp, local = probe(), self._db.local_writes
        hit = self._views.get((repo, name))
        if hit is not None and hit[1] == local and hit[0] == stamp:
            return hit[2]
        if not eager:
            return self._read(repo, name, 0)
        view = self._read(repo, name, STAGED_IN_MEMORY)
        if len(self._views) >= VIEW_CACHE_SIZE:
            self._views.clear()
        self._views[(repo, name)] = (stamp, local, view)
        return view
