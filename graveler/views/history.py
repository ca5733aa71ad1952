"""Commit identity, history walks and merge bases.

A commit ID is the SHA-256 of a canonical JSON encoding of (parents, metarange ID, message,
committer, creation date with microseconds, metadata). Generation is not hashed: it is derived
(``max(parent generations) + 1``) and used to find merge bases.
"""

from __future__ import annotations

import hashlib
import heapq
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime

from graveler.core.model import Commit

GetCommit = Callable[[str], Commit]


def commit_id(
    parents: Sequence[str],
    metarange_id: str,
    message: str,
    committer: str,
    creation_date: datetime,
    metadata: Mapping[str, str],
) -> str:
    doc = {
        "v": 1,
        "parents": list(parents),
        "metarange_id": metarange_id,
        "message": message,
        "committer": committer,
        "creation_date": creation_date.astimezone(UTC).isoformat(timespec="microseconds"),
        "metadata": dict(sorted(metadata.items())),
    }
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def make_commit(
    parents: Sequence[Commit],
    metarange_id: str,
    message: str,
    committer: str,
    metadata: Mapping[str, str] | None = None,
    creation_date: datetime | None = None,
) -> Commit:
    when = (creation_date or datetime.now(UTC)).astimezone(UTC)
    meta = dict(metadata or {})
    parent_ids = tuple(p.id for p in parents)
    return Commit(
        id=commit_id(parent_ids, metarange_id, message, committer, when, meta),
        parents=parent_ids,
        metarange_id=metarange_id,
        message=message,
        committer=committer,
        creation_date=when,
        metadata=meta,
        generation=max((p.generation for p in parents), default=0) + 1,
    )


def commit_problem(c: Commit, parents: Sequence[Commit] | None) -> str | None:
    """Why ``c`` is not the commit :func:`make_commit` would build from its own content (its ID
    is not that content's hash, or its generation is not one past its parents'), or None.
    ``parents`` are its parent commits, or None when not all are known (generation unchecked)."""
    actual = commit_id(
        c.parents, c.metarange_id, c.message, c.committer, c.creation_date, c.metadata
    )
    if actual != c.id:
        return f"its content hashes to {actual}"
    if parents is not None:
        expected = max((p.generation for p in parents), default=0) + 1
        if c.generation != expected:
            return f"generation {c.generation}, expected {expected}"
    return None


def first_parent_log(get: GetCommit, start: Commit, amount: int | None = None) -> Iterator[Commit]:
    """The commit and its first-parent ancestors, newest first."""
    commit: Commit | None = start
    n = 0
    while commit is not None and (amount is None or n < amount):
        yield commit
        n += 1
        commit = get(commit.parents[0]) if commit.parents else None


def merge_base(get: GetCommit, left: Commit, right: Commit) -> Commit | None:
    """The best common ancestor, walking from the highest generation down (git-style)."""
    if left.id == right.id:
        return left
    LEFT, RIGHT = 1, 2
    reached: dict[str, int] = {left.id: LEFT, right.id: RIGHT}
    commits = {left.id: left, right.id: right}
    heap = [(-left.generation, left.id), (-right.generation, right.id)]
    heapq.heapify(heap)
    while heap:
        _, cid = heapq.heappop(heap)
        flags = reached[cid]
        if flags == LEFT | RIGHT:
            return commits[cid]
        for pid in commits[cid].parents:
            parent = commits.get(pid) or get(pid)
            commits[pid] = parent
            before = reached.get(pid, 0)
            reached[pid] = before | flags
            if before == 0 or reached[pid] == LEFT | RIGHT:
                heapq.heappush(heap, (-parent.generation, pid))
    return None
