"""Read views: what a read at a ref needs (the commit, and for a branch name its staged
entries), found without a database round trip whenever that is safe.

* A full commit ID names an immutable commit: its view is kept per client.
* A plain branch name reads through :meth:`graveler.storage.refs.port.StagingStore.branch_view`,
  which re-reads the branch whenever anything was committed since (by any process) and
  otherwise hands back the view it already has; the view of the commit it points at is
  kept beside it.
* Anything else (tags, commit-ID prefixes, ``~``/``^`` expressions) goes through
  :func:`graveler.views.resolve.resolve` on every call.

:class:`ReadCache` also keeps decoded object entries: committed records (and staged entries)
never change, so an entry decoded once is handed out again, up to a bounded count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Protocol, TypeVar, cast

from graveler.core.errors import BranchNotFound
from graveler.core.model import Branch, Commit, ResolvedRef, StagedEntry
from graveler.storage import entry as entries
from graveler.storage.committed.manager import CommittedManager
from graveler.storage.committed.record import ValueRecord
from graveler.storage.refs.port import BranchView, StagingStore
from graveler.views.layers import merged_staging, staged_lookup
from graveler.views.refexpr import looks_like_commit_prefix, parse_ref

#: Decoded entries a client keeps (about 600 bytes each).
ENTRY_CACHE_SIZE = 32_768
#: Trees whose entries a client also keeps by key, for batched lookups (``stat_many``).
TREE_MAPS = 8
#: Views of commit IDs and branches a client keeps.
VIEW_CACHE_SIZE = 4_096
#: A record as the entry cache keys it: (key, identity, value).
Record = tuple[bytes, bytes | None, bytes]
K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class ReadView:
    """What a read at a ref sees: ``commit``'s tree, under ``staged`` for a branch.
    ``get`` looks a key up in the tree (``CommittedManager.get`` bound to its metarange)."""

    commit: Commit
    get: Callable[[bytes], ValueRecord | None]
    staged: BranchView | None = None


class Reader(Protocol):
    """What :meth:`ReadCache.view` needs of a repository (a narrow part of RepoContext)."""

    @property
    def name(self) -> str: ...

    @property
    def staging(self) -> StagingStore: ...

    @property
    def committed(self) -> CommittedManager: ...

    def get_commit(self, commit_id: str) -> Commit: ...

    def resolve(self, ref: str, *, branches: bool = True) -> ResolvedRef: ...


class ReadCache:
    """Per-client caches of read views and decoded entries (thread-safe: single dict
    operations only, and a full cache is emptied rather than evicted from)."""

    def __init__(self, entry_limit: int = ENTRY_CACHE_SIZE) -> None:
        # Views of full commit IDs: (repository name, ref) -> view.
        self._commits: dict[tuple[str, str], ReadView] = {}
        # Views of branch names: (repository name, ref) -> view of the branch as last read.
        self._branches: dict[tuple[str, str], ReadView] = {}
        # Decoded entries by record, ``(key, identity, value)``: a committed ValueRecord (whose
        # bytes keep their hashes) or an equal tuple built from a staged entry.
        self._entries: dict[Record, entries.ObjectEntry] = {}
        # The same entries by key, per tree (metarange ID): what stat_many probes first.
        self._by_tree: dict[str, dict[bytes, entries.ObjectEntry]] = {}
        self._entry_limit = entry_limit

    def view(self, repo: Reader, ref: str) -> ReadView:
        """The view of ``ref`` (see the module docstring). Raises InvalidRef, RefNotFound."""
        key = (repo.name, ref)
        hit = self._commits.get(key)
        if hit is not None:
            return hit
        known = self._branches.get(key)
        if known is not None:  # a branch last time: is it still?
            try:
                branch = repo.staging.branch_view(repo.name, ref)
            except BranchNotFound:
                self._branches.pop(key, None)
                return self._resolve(repo, ref, branches=False)
            return known if known.staged is branch else self._branch_read(repo, branch)
        return self._resolve(repo, ref)

    def _resolve(self, repo: Reader, ref: str, branches: bool = True) -> ReadView:
        if type(ref) is str and len(ref) == 64 and looks_like_commit_prefix(ref):
            view = _view_of(repo, repo.resolve(ref).commit)
            if view.commit.id == ref:
                _remember(self._commits, (repo.name, ref), view)
            return view
        expr = parse_ref(ref)
        if branches and expr.is_plain and expr.base == ref:
            try:
                branch = repo.staging.branch_view(repo.name, ref)
            except BranchNotFound:
                branches = False  # known now: no need to look again while resolving
            else:
                return self._branch_read(repo, branch)
        resolved = repo.resolve(ref, branches=branches)
        if resolved.branch is None:
            return _view_of(repo, resolved.commit)
        return _view_of(repo, resolved.commit, TokenStaging(repo.staging, resolved.branch))

    def _branch_read(self, repo: Reader, branch: BranchView) -> ReadView:
        view = _view_of(repo, repo.get_commit(branch.branch.commit_id), branch)
        _remember(self._branches, (repo.name, branch.branch.name), view)
        return view

    def entry(self, record: Record) -> entries.ObjectEntry:
        """The decoded entry of a record ``(key, identity, value)``. Raises CorruptFile."""
        found = self._entries.get(record)
        if found is None:
            found = entries.decode(record[0], record[2])
            _remember(self._entries, record, found, self._entry_limit)
        return found

    def committed_entries(
        self, committed: CommittedManager, metarange_id: str, keys: list[bytes]
    ) -> list[entries.ObjectEntry | None]:
        """The decoded entries of ``keys`` in a tree (None where absent), aligned with
        ``keys``: a warm batch is one C-level pass over the tree's map of entries already
        handed out by key; the rest are looked up with ``get_many`` and remembered there
        (up to the entry limit per tree, for the :data:`TREE_MAPS` trees read last)."""
        by_key = self._by_tree.get(metarange_id)
        if by_key is None:
            if len(self._by_tree) >= TREE_MAPS:
                self._by_tree.clear()
            by_key = self._by_tree[metarange_id] = {}
        out = list(map(by_key.get, keys))
        if all(out):  # a C-level scan (entries are truthy)
            return out
        missing = [i for i, e in enumerate(out) if e is None]
        found = self.entries(committed.get_many(metarange_id, [keys[i] for i in missing]))
        if len(by_key) + len(missing) > self._entry_limit:
            by_key.clear()
        for i, entry in zip(missing, found, strict=True):
            out[i] = entry
            if entry is not None:
                by_key[keys[i]] = entry
        return out

    def entries(self, records: list[ValueRecord | None]) -> list[entries.ObjectEntry | None]:
        """:meth:`entry` of every record (None stays None), in order: one C-level pass over
        the cache, then a decode of each record it did not hold."""
        lookup = cast(Callable[[object], entries.ObjectEntry | None], self._entries.get)
        out = list(map(lookup, records))
        if all(out):  # a C-level scan (entries are truthy): all cached, as in a warm read
            return out
        for i in [i for i, e in enumerate(out) if e is None]:
            rec = records[i]
            if rec is not None:
                out[i] = self.entry(rec)
        return out

    def clear(self) -> None:
        self._by_tree.clear()
        self._commits.clear()
        self._branches.clear()
        self._entries.clear()


def _view_of(repo: Reader, commit: Commit, staged: BranchView | None = None) -> ReadView:
    return ReadView(commit, partial(repo.committed.get, commit.metarange_id), staged)


def _remember(cache: dict[K, V], key: K, value: V, limit: int = VIEW_CACHE_SIZE) -> None:
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value


class TokenStaging:
    """The staged entries of a branch row resolved by other means (a ref expression that
    keeps its branch): looked up token by token, as of each call."""

    def __init__(self, staging: StagingStore, branch: Branch) -> None:
        self.branch = branch
        self.clean = False
        self._staging = staging
        self._tokens = branch.tokens

    def lookup(self, key: bytes) -> StagedEntry | None:
        return staged_lookup(self._staging, self._tokens, key)

    def iter_staged(self, start: bytes = b"", prefix: bytes = b"") -> Iterator[StagedEntry]:
        return merged_staging(self._staging, self._tokens, start, prefix)
