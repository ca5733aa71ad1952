"""Commit history of a ref, as lakeFS's ``log`` lists it.

By default every ancestor is listed (all parents are followed), newest first by creation date,
ties broken by the larger commit ID (lakeFS's commit iterator), with one rule over both: no
commit is listed after one of its ancestors, even when timestamps tie or clocks disagree (a
commit waits until all its children in the listing are listed). Options narrow the walk:

* ``first_parent`` follows first parents only;
* ``since`` stops the walk at commits created before it (their ancestors are not visited);
  ``until`` hides commits created after it (the walk goes on through them);
* ``stop_at`` (a ref) ends the listing with that commit;
* ``objects`` / ``prefixes`` keep only commits that changed one of those paths, or a path
  under one of those prefixes, relative to their parent. As in lakeFS, merge commits (and
  the parentless first commit) are then skipped: their changes are listed where they were
  made;
* ``no_merges`` skips merge commits; ``amount`` caps how many commits are listed.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from graveler.core import validate
from graveler.core.errors import InvalidArgument
from graveler.core.model import Commit
from graveler.views.context import RepoContext
from graveler.views.resolve import resolve_commit


class _Newest:
    """Heap order: newest creation date first, then the larger commit ID (lakeFS)."""

    __slots__ = ("commit",)

    def __init__(self, commit: Commit) -> None:
        self.commit = commit

    def __lt__(self, other: _Newest) -> bool:
        a, b = self.commit, other.commit
        if a.creation_date != b.creation_date:
            return a.creation_date > b.creation_date
        return a.id > b.id


def log_commits(
    repo: RepoContext,
    ref: str,
    amount: int | None = None,
    *,
    first_parent: bool = False,
    since: datetime | None = None,
    until: datetime | None = None,
    stop_at: str | None = None,
    objects: Sequence[str] = (),
    prefixes: Sequence[str] = (),
    no_merges: bool = False,
) -> Iterator[Commit]:
    """Commits reachable from ``ref``, newest first (see the module docstring). Arguments
    are checked before anything is read: InvalidArgument for a negative ``amount``, a naive
    datetime or an empty path; InvalidRef / RefNotFound for bad refs."""
    if amount is not None and (not isinstance(amount, int) or amount < 0):
        raise InvalidArgument("amount must be an integer >= 0")
    _aware(since, "since")
    _aware(until, "until")
    keys = _paths(objects, "objects")
    prefix_keys = _paths(prefixes, "prefixes")
    start = resolve_commit(repo, ref)
    stop = resolve_commit(repo, stop_at).id if stop_at is not None else None
    walk = _walk(repo, start, first_parent, since)
    kept = _filtered(repo, walk, _Filter(keys, prefix_keys, no_merges, until), stop)
    return _limited(kept, amount)


def _walk(
    repo: RepoContext, start: Commit, first_parent: bool, since: datetime | None
) -> Iterator[Commit]:
    """Ancestors of ``start`` (itself included) in lakeFS order, pruned at ``since``, never
    listing a commit after one of its ancestors (see :class:`_TopoWalk`)."""
    return _TopoWalk(repo, first_parent, since).run(start)


class _TopoWalk:
    """Newest first (:class:`_Newest`) among the commits all of whose children in the walk
    are already listed, so that equal timestamps (or clocks that disagree) never put a parent
    before its child.

    A commit's children among the walk are known once every reachable commit of a larger
    generation has been *explored* (its parents counted): each child's generation is larger
    than its parent's. So before a parent is released the exploration goes down to its
    generation, and it is released when the last of its counted children is listed. A
    ``log --amount 10`` explores little more than it lists."""

    def __init__(self, repo: RepoContext, first_parent: bool, since: datetime | None) -> None:
        self._repo = repo
        self._first_parent = first_parent
        self._since = since
        self._children: dict[str, int] = {}  # explored children not yet listed, per commit
        self._explore: list[tuple[int, str, Commit]] = []  # max-heap by generation
        self._explored: set[str] = set()
        self._listed: set[str] = set()

    def run(self, start: Commit) -> Iterator[Commit]:
        self._discover(start)
        ready = [_Newest(start)]
        while ready:
            commit = heapq.heappop(ready).commit
            if commit.id in self._listed:
                continue
            self._listed.add(commit.id)
            yield commit
            self._explore_commit(commit)
            for parent in self._parents(commit):
                self._explore_above(parent.generation)
                self._children[parent.id] -= 1
                if self._children[parent.id] <= 0 and parent.id not in self._listed:
                    heapq.heappush(ready, _Newest(parent))

    def _parents(self, commit: Commit) -> Iterator[Commit]:
        """The parents the walk follows (first only, or all), those older than ``since``
        left out (their ancestors are not visited)."""
        ids = commit.parents[:1] if self._first_parent else commit.parents
        for pid in dict.fromkeys(ids):
            parent = self._repo.get_commit(pid)
            if self._since is None or parent.creation_date >= self._since:
                yield parent

    def _discover(self, commit: Commit) -> None:
        if commit.id not in self._children:
            self._children[commit.id] = 0
            heapq.heappush(self._explore, (-commit.generation, commit.id, commit))

    def _explore_commit(self, commit: Commit) -> None:
        if commit.id in self._explored:
            return
        self._explored.add(commit.id)
        for parent in self._parents(commit):
            self._discover(parent)
            self._children[parent.id] += 1

    def _explore_above(self, generation: int) -> None:
        """Explore every discovered commit of a generation above ``generation``."""
        heap = self._explore
        while heap and -heap[0][0] > generation:
            self._explore_commit(heapq.heappop(heap)[2])


@dataclass(frozen=True, slots=True)
class _Filter:
    keys: list[bytes]
    prefixes: list[bytes]
    no_merges: bool
    until: datetime | None

    def keeps(self, repo: RepoContext, commit: Commit) -> bool:
        if self.until is not None and commit.creation_date > self.until:
            return False
        if self.no_merges and len(commit.parents) > 1:
            return False
        if self.keys or self.prefixes:
            return len(commit.parents) == 1 and _touches(repo, commit, self.keys, self.prefixes)
        return True


def _filtered(
    repo: RepoContext, commits: Iterable[Commit], keep: _Filter, stop: str | None
) -> Iterator[Commit]:
    for commit in commits:
        if keep.keeps(repo, commit):
            yield commit
        if commit.id == stop:
            return


def _touches(repo: RepoContext, commit: Commit, keys: list[bytes], prefixes: list[bytes]) -> bool:
    """Whether ``commit`` changed one of ``keys`` or anything under ``prefixes`` relative to
    its (only) parent. A prefix costs one diff cut to the prefix's ranges."""
    parent = repo.get_commit(commit.parents[0]).metarange_id
    mine = commit.metarange_id
    if parent == mine:
        return False
    for key in keys:
        a, b = repo.committed.get(parent, key), repo.committed.get(mine, key)
        if (a.identity if a else None) != (b.identity if b else None):
            return True
    return any(next(repo.committed.diff(parent, mine, p), None) is not None for p in prefixes)


def _limited(commits: Iterator[Commit], amount: int | None) -> Iterator[Commit]:
    if amount is None:
        yield from commits
        return
    for n, commit in enumerate(commits):
        if n >= amount:
            return
        yield commit


def _aware(value: datetime | None, what: str) -> None:
    if value is None:
        return
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        raise InvalidArgument(f"{what} must be a timezone-aware datetime, got {value!r}")


def _paths(values: Sequence[str], what: str) -> list[bytes]:
    if isinstance(values, str):
        raise InvalidArgument(f"{what} must be a list of paths, not one string")
    if any(v == "" for v in values):
        raise InvalidArgument(f"{what} contains an empty path")
    return [validate.object_key(v) for v in values]
