"""``graveler://<repository>/<ref>[/<path>]`` assets, and the asset events of merges.

Airflow identifies an asset by name and URI and strips trailing slashes from URIs, so the
canonical form of a graveler asset has none: ``graveler://lake/main/clean/weather`` names the
object or directory ``clean/weather`` on branch ``main``, and ``graveler://lake/main`` the
whole branch. Build assets with :func:`graveler_asset` (name = URI) so that the assets a merge
emits and the ones a downstream DAG is scheduled on are the same.

A merge emits one event for every directory level that contains merged changes, down from the
branch root: merging ``clean/weather/part-0.parquet`` into ``main`` emits events for
``graveler://lake/main/clean/weather``, ``graveler://lake/main/clean`` and
``graveler://lake/main``. At most ``limit`` assets are emitted; the deepest levels are
dropped first. Passing explicit ``paths`` emits events only for those that changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult

from airflow.sdk import Asset

from graveler import GravelerURI
from graveler.errors import InvalidURI

if TYPE_CHECKING:
    from graveler import Repository

SCHEME = "graveler"
DEFAULT_LIMIT = 50


def asset_uri(repository: str, ref: str, path: str = "") -> str:
    """The canonical asset URI (no trailing slash) of ``path`` on ``ref``."""
    return str(GravelerURI(repository, ref).child(path))


def graveler_asset(repository: str, ref: str, path: str = "", **kwargs: Any) -> Asset:
    """An :class:`airflow.sdk.Asset` for ``path`` on ``ref`` whose name is its URI."""
    return asset_from_uri(asset_uri(repository, ref, path), **kwargs)


def asset_from_uri(uri: str, **kwargs: Any) -> Asset:
    """The asset of a canonical graveler URI, named by that URI."""
    return Asset(name=uri, uri=uri, **kwargs)


def create_asset(
    *, repository: str, ref: str, path: str = "", extra: dict[str, Any] | None = None
) -> Asset:
    """The asset factory registered with Airflow for the ``graveler`` scheme."""
    return graveler_asset(repository, ref, path, extra=extra)


def sanitize_uri(uri: SplitResult) -> SplitResult:
    """The URI handler registered with Airflow: the netloc must be a valid repository name and
    the path must start with a ref; empty path components are dropped.

    Raises InvalidURI (a ValueError, which Airflow reports as an invalid asset URI)."""
    if not uri.netloc:
        raise InvalidURI("a graveler asset URI needs a repository: graveler://REPO/REF[/PATH]")
    parts = [p for p in uri.path.split("/") if p]
    if not parts:
        raise InvalidURI(f"graveler asset URI graveler://{uri.netloc} needs a ref after the repo")
    try:
        parsed = GravelerURI(uri.netloc, parts[0]).child("/".join(parts[1:]))
    except InvalidURI as exc:
        raise InvalidURI(f"graveler asset URI: {exc}") from exc
    return uri._replace(path=str(parsed)[len(f"{SCHEME}://{uri.netloc}") :], query="", fragment="")


@dataclass(frozen=True)
class AssetChange:
    """One asset event to emit: the asset URI and the event's extra."""

    uri: str
    extra: dict[str, Any]


def merge_changes(
    repo: Repository,
    branch: str,
    before: str,
    after: str,
    *,
    paths: Sequence[str] | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[AssetChange]:
    """The asset events for the commits between ``before`` and ``after`` on ``branch``."""
    changed = [d.path for d in repo.diff(before, after)]
    base = {
        "repository": repo.name,
        "branch": branch,
        "commit_id": after,
        "previous_commit_id": before,
    }
    counts = _explicit_counts(changed, paths) if paths is not None else _level_counts(changed)
    kept = _bounded(counts, limit)
    return [
        AssetChange(asset_uri(repo.name, branch, p), {**base, "path": p, "changes": counts[p]})
        for p in kept
    ]


def _level_counts(changed: Iterable[str]) -> dict[str, int]:
    """Changed-object counts of every directory level holding a change ("" is the root)."""
    counts: dict[str, int] = {}
    for path in changed:
        parts = path.split("/")[:-1]
        for depth in range(len(parts) + 1):
            level = "/".join(parts[:depth])
            counts[level] = counts.get(level, 0) + 1
    return counts


def _explicit_counts(changed: list[str], paths: Sequence[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for wanted in paths:
        p = wanted.strip("/")
        n = sum(1 for c in changed if not p or c == p or c.startswith(p + "/"))
        if n:
            counts[p] = n
    return counts


def _bounded(counts: dict[str, int], limit: int) -> list[str]:
    """The paths to emit, shallowest first, dropping whole deepest levels beyond ``limit``."""
    ordered = sorted(counts, key=lambda p: (p.count("/") if p else -1, p))
    while len(ordered) > limit:
        deepest = max(p.count("/") if p else -1 for p in ordered)
        ordered = [p for p in ordered if (p.count("/") if p else -1) < deepest]
    return ordered
