"""Retention rules of garbage collection, and which commits they retain.

Rules give each branch a number of days (a per-branch value, else the default). A commit is
*retained* when any of these holds:

* it is the head of a branch, or a tag points at it;
* it lies on a branch's first-parent history between the head and the commit that was the
  head when the branch's retention window opened, both included: walking back from the head,
  commits are kept up to and including the first one created before the window;
* it lies on no branch's first-parent history (a deleted branch's commits, or a side branch
  only reachable through a merge's second parent) and is younger than the default window.

So everything a reader could see on a branch during its last N days survives, and a deleted
branch's data survives for the default window. Commit *metadata* is never collected; only
the objects of expired commits go (see :mod:`graveler.maintenance.gc.plan`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from graveler.core.errors import InvalidArgument
from graveler.core.model import Branch, Commit, Tag

DEFAULT_RETENTION_DAYS = 21.0


@dataclass(frozen=True)
class RetentionRules:
    """How long each branch keeps what it showed: ``branch_days[name]`` or ``default_days``."""

    default_days: float = DEFAULT_RETENTION_DAYS
    branch_days: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_days("default retention", self.default_days)
        for name, days in self.branch_days.items():
            if not isinstance(name, str) or not name:
                raise InvalidArgument(f"retention rule names a bad branch: {name!r}")
            _check_days(f"retention of branch {name!r}", days)

    def days_for(self, branch: str) -> float:
        return float(self.branch_days.get(branch, self.default_days))

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> RetentionRules:
        """Rules from the lakeFS JSON shape: ``{"default_retention_days": 21, "branches":
        [{"branch_id": "main", "retention_days": 28}]}``. Raises InvalidArgument."""
        try:
            default = float(doc.get("default_retention_days", DEFAULT_RETENTION_DAYS))
            branches = {
                str(b["branch_id"]): float(b["retention_days"]) for b in doc.get("branches", [])
            }
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise InvalidArgument(
                'retention rules must look like {"default_retention_days": 21, "branches": '
                '[{"branch_id": "main", "retention_days": 28}]}'
            ) from exc
        return cls(default, branches)

    @classmethod
    def load(cls, path: str | Path) -> RetentionRules:
        """Rules from a JSON file (see :meth:`from_dict`)."""
        try:
            doc = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise InvalidArgument(f"cannot read retention rules from {path}: {exc}") from exc
        if not isinstance(doc, dict):
            raise InvalidArgument(f"retention rules in {path} must be a JSON object")
        return cls.from_dict(doc)

    def to_dict(self) -> dict[str, Any]:
        branches = [
            {"branch_id": b, "retention_days": d} for b, d in sorted(self.branch_days.items())
        ]
        return {"default_retention_days": self.default_days, "branches": branches}


def _check_days(what: str, days: object) -> None:
    if isinstance(days, bool) or not isinstance(days, int | float):
        raise InvalidArgument(f"{what} must be a number of days, got {days!r}")
    if not math.isfinite(days) or days < 0:
        raise InvalidArgument(f"{what} must be a finite number of days >= 0, got {days!r}")


def retained_commits(
    commits: Mapping[str, Commit],
    branches: Iterable[Branch],
    tags: Iterable[Tag],
    rules: RetentionRules,
    now: datetime,
) -> set[str]:
    """IDs of the commits ``rules`` retain at time ``now`` (see the module docstring).

    ``commits`` must hold every commit of the repository; branch heads and tag targets missing
    from it are still retained (they are referenced), their history is simply not walked."""
    keep: set[str] = {t.commit_id for t in tags}
    on_history: set[str] = set()
    for branch in branches:
        keep.add(branch.commit_id)
        cutoff = now - timedelta(days=rules.days_for(branch.name))
        _walk_branch(commits, branch.commit_id, cutoff, keep, on_history)
    dangling_cutoff = now - timedelta(days=rules.default_days)
    for cid, commit in commits.items():
        if cid not in on_history and commit.creation_date >= dangling_cutoff:
            keep.add(cid)
    return keep


def _walk_branch(
    commits: Mapping[str, Commit], head: str, cutoff: datetime, keep: set[str], seen: set[str]
) -> None:
    """Walk first parents from ``head``: keep commits visible at the head since ``cutoff``,
    record the history in ``seen``; stop early once the window is closed and history known."""
    commit = commits.get(head)
    window_open = True  # the previous (child) commit was created after the cutoff
    while commit is not None:
        if window_open:
            keep.add(commit.id)
            window_open = commit.creation_date >= cutoff
        elif commit.id in seen:
            return
        seen.add(commit.id)
        commit = commits.get(commit.parents[0]) if commit.parents else None
