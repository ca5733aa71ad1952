"""Finding new commits on a branch and whether they touch a prefix (for the diff sensor).

Pure graveler: no Dagster here, so the rules are easy to test and reuse.

* New commits are those on the branch's first-parent history after the last one seen, oldest
  first. A merge commit counts once, with the changes it brought relative to its first parent.
* If the last commit seen is no longer in that history (the branch was reset or recreated), the
  whole move from it to the head counts as one change.
"""

from __future__ import annotations

from dataclasses import dataclass

from graveler import Commit, Repository
from graveler.errors import CommitNotFound


@dataclass(frozen=True, slots=True)
class NewCommit:
    """A commit to evaluate, and the commit its changes are measured from (None: the empty
    tree, when the previous state is unknown)."""

    commit: Commit
    base: str | None


def new_commits(repo: Repository, head: Commit, seen: str, limit: int = 1000) -> list[NewCommit]:
    """Commits after ``seen`` up to ``head``, oldest first (see the module docstring)."""
    if head.id == seen:
        return []
    walked: list[Commit] = []
    for commit in repo.log(head.id, amount=limit, first_parent=True):
        if commit.id == seen:
            return [NewCommit(c, c.parents[0] if c.parents else None) for c in reversed(walked)]
        walked.append(commit)
    try:
        base: str | None = repo.get_commit(seen).id
    except CommitNotFound:
        base = None
    return [NewCommit(head, base)]


def touches(repo: Repository, change: NewCommit, prefix: str) -> bool:
    """True when the commit changed (added, changed or removed) a path under ``prefix``."""
    if change.base is None:
        return any(True for _ in repo.iter_objects(change.commit.id, prefix))
    return any(True for _ in repo.diff(change.base, change.commit.id, prefix=prefix))
