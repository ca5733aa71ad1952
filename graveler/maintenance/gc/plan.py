"""What a garbage collection run decides before reading any range: the plan.

:func:`prepare` reads refs and staging (SQL only; no object-store access) and fixes
everything both implementations share: the retained commits, the metaranges to mark,
the staged addresses and the deletion cutoff. Implementations then *mark* (read metaranges and
ranges), *list* the namespace and *select* with :func:`is_garbage`, the one definition of
garbage:

* a data object (``data/...``) is garbage when no retained commit and no staged entry
  references it and it is older than the grace period;
* a tree file (``_graveler/<id>``) is garbage when no commit at all references it (a tree left
  by a failed or interrupted commit) and it is older than the grace period. Trees of expired
  commits are kept: commit history stays readable, only the objects' bytes go.

Ordering keeps a concurrent commit safe: staging is read *before* branches are listed again
for the heads, so an entry that moves from staging into a commit meanwhile is seen in one of
the two. Objects written during the run are younger than the grace period.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from graveler.core.errors import InvalidArgument
from graveler.core.model import Commit
from graveler.maintenance.gc.mark import is_collectable, staged_addresses, tree_file_id
from graveler.maintenance.gc.rules import RetentionRules, retained_commits
from graveler.storage.namespaces import require_owner
from graveler.storage.objectstore.port import ObjectInfo

if TYPE_CHECKING:
    from graveler.repository import Repository

DEFAULT_GRACE = timedelta(hours=24)

#: ``progress(phase, done, total)``; phases: "mark-metaranges", "mark-ranges", "list", "sweep".
Progress = Callable[[str, int, int], None]


def no_progress(phase: str, done: int, total: int) -> None:
    """A progress callback that does nothing."""


@dataclass(frozen=True)
class GCPlan:
    """Everything a run decided from refs and staging."""

    repository: str
    namespace: str
    now: datetime
    cutoff: datetime  # objects modified at or after this are inside the grace period
    commits_total: int
    retained: frozenset[str]  # commit IDs
    retained_metaranges: frozenset[str]
    all_metaranges: frozenset[str]  # of every commit, expired or not
    staged: frozenset[str]  # physical addresses of staged values
    expired: frozenset[str] = frozenset()  # commit IDs the rules do not retain


@dataclass(frozen=True)
class Marks:
    """What the mark phase found reachable."""

    objects: frozenset[str]  # physical addresses of retained commits and staging
    tree_files: frozenset[str]  # metarange and range IDs of every commit
    ranges_read: int


@dataclass(frozen=True)
class GCReport:
    """The outcome of a run; ``selected`` is what went (or would go, in a dry run)."""

    repository: str
    dry_run: bool
    commits_total: int
    commits_retained: int
    objects_marked: int
    tree_files_marked: int
    ranges_read: int
    scanned: int
    in_grace: int
    selected: tuple[ObjectInfo, ...]
    deleted: int
    #: Multipart uploads aborted for being older than the expiry (counted in a dry run).
    uploads_expired: int = 0
    #: Part files of uploads that no longer exist, deleted (or found, in a dry run).
    orphan_parts: int = 0

    @property
    def selected_bytes(self) -> int:
        return sum(o.size for o in self.selected)

    def to_dict(self) -> dict[str, object]:
        return {
            "repository": self.repository,
            "dry_run": self.dry_run,
            "commits_total": self.commits_total,
            "commits_retained": self.commits_retained,
            "objects_marked": self.objects_marked,
            "tree_files_marked": self.tree_files_marked,
            "ranges_read": self.ranges_read,
            "scanned": self.scanned,
            "in_grace": self.in_grace,
            "selected": [o.key for o in self.selected],
            "selected_bytes": self.selected_bytes,
            "deleted": self.deleted,
            "uploads_expired": self.uploads_expired,
            "orphan_parts": self.orphan_parts,
        }


def prepare(
    repo: Repository,
    rules: RetentionRules | None = None,
    *,
    grace: timedelta = DEFAULT_GRACE,
    now: datetime | None = None,
) -> GCPlan:
    """Decide retained commits and staged addresses of ``repo`` at ``now`` (default: now).
    NamespaceInUse unless ``repo`` owns its namespace alone (:func:`graveler.storage.namespaces.
    require_owner`): collecting a shared namespace would delete the other repository's data."""
    if grace < timedelta(0):
        raise InvalidArgument(f"grace period must not be negative, got {grace}")
    require_owner(repo.refs, repo.store, repo.info, "garbage collection")
    at = (now or datetime.now(UTC)).astimezone(UTC)
    tokens = [t for b in repo.list_branches() for t in b.tokens]
    staged = staged_addresses(repo.staging, tokens)
    branches = repo.list_branches()  # after staging: see the module docstring
    tags = repo.list_tags()
    commits: dict[str, Commit] = {c.id: c for c in repo.refs.iter_commits(repo.name)}
    keep = retained_commits(commits, branches, tags, rules or RetentionRules(), at)
    return GCPlan(
        repository=repo.name,
        namespace=repo.info.storage_namespace,
        now=at,
        cutoff=at - grace,
        commits_total=len(commits),
        retained=frozenset(keep),
        retained_metaranges=frozenset(commits[c].metarange_id for c in keep if c in commits),
        all_metaranges=frozenset(c.metarange_id for c in commits.values()),
        staged=frozenset(staged),
        expired=frozenset(commits) - keep,
    )


def is_garbage(info: ObjectInfo, marks: Marks, cutoff: datetime) -> bool:
    """The one definition of garbage (see the module docstring)."""
    if info.mtime >= cutoff or not is_collectable(info.key):
        return False
    file_id = tree_file_id(info.key)
    if file_id is not None:
        return file_id not in marks.tree_files
    return info.key not in marks.objects
