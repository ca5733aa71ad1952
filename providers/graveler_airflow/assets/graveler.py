"""``graveler://<repository>/<ref>[/<path>]`` assets, and the asset events of merges.

Airflow identifies an asset by name and URI and strips trailing slashes from URIs, so the
canonical form of a graveler asset has none: ``graveler://lake/main/clean/weather`` names the
object or directory ``clean/weather`` on branch ``main``, and ``graveler://lake/main`` the
whole branch. Build assets with :func:`graveler_asset` (name = URI) so that the assets a merge
emits and the ones a downstream DAG is scheduled on are the same.

The assets a merge changed are its **tables** (:func:`table_path`): the directory holding a
changed object, cut before its first Hive partition (``key=value``) or hidden (``_x``, ``.x``)
directory. Merging ``tables/daily/date=2024-01-01/part-0.parquet`` and
``tables/daily/_delta_log/00001.json`` changes one asset, ``graveler://lake/main/tables/daily``;
an object at the branch root belongs to the branch asset ``graveler://lake/main``. Passing
explicit ``paths`` selects those paths instead (each counts the changes under it). At most
``limit`` assets are reported, shallowest first.
"""

from __future__ import annotations

from collections import Counter
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
    """One asset a merge changed: its URI, its path on the branch and the event's extra."""

    uri: str
    path: str
    extra: dict[str, Any]


def table_path(path: str) -> str:
    """The table an object belongs to: its directory, up to (not including) the first Hive
    partition directory (``key=value``) or hidden directory (``_name``, ``.name``); "" for an
    object at the root."""
    table: list[str] = []
    for part in path.split("/")[:-1]:
        if "=" in part or part.startswith(("_", ".")):
            break
        table.append(part)
    return "/".join(table)


def merge_changes(
    repo: Repository,
    branch: str,
    before: str,
    after: str,
    *,
    paths: Sequence[str] | None = None,
    limit: int = DEFAULT_LIMIT,
    extra: dict[str, Any] | None = None,
    changed: Sequence[str] | None = None,
) -> list[AssetChange]:
    """The assets the commits between ``before`` and ``after`` on ``branch`` changed: tables
    (default) or those of ``paths`` holding changes, with ``changes`` counted under each.
    Explicit paths are diffed under their own prefix only. ``changed``: every changed path
    between the two, when the caller already listed them (no second diff)."""
    if paths is None:
        if changed is None:
            changed = [d.path for d in repo.diff(before, after)]
        counts = Counter(table_path(p) for p in changed)
    else:
        counts = Counter()
        for wanted in {p.strip("/") for p in paths}:
            under = (d.path for d in repo.diff(before, after, prefix=wanted))
            counts[wanted] = count_under(under, wanted)
    base = {
        "repository": repo.name,
        "branch": branch,
        "commit_id": after,
        "previous_commit_id": before,
        **(extra or {}),
    }
    kept = sorted((p for p, n in counts.items() if n), key=lambda p: (_depth(p), p))[:limit]
    return [
        AssetChange(asset_uri(repo.name, branch, p), p, {**base, "path": p, "changes": counts[p]})
        for p in kept
    ]


def _depth(path: str) -> int:
    return path.count("/") + 1 if path else 0


def count_under(changed: Iterable[str], path: str) -> int:
    """How many of the ``changed`` object paths are ``path`` or lie under it."""
    p = path.strip("/")
    return sum(1 for c in changed if not p or c == p or c.startswith(p + "/"))
