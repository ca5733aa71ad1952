"""``put`` of many local files at once: one ``Repository.upload_many`` per branch.

fsspec's ``put`` expands its arguments into (local file, remote path) pairs and calls
``put_file`` for each. :class:`~graveler_fsspec.filesystem.GravelerFileSystem` lets that
expansion run, collects the pairs instead of uploading them one by one, and hands them here:
the files bound for one branch are written in parallel and staged in one transaction, so a
directory lands whole or not at all (per branch).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from graveler import Repository
from graveler_fsspec.errors import translated

#: Where a remote path is written: (repository, branch, key), checked writable.
WriteTarget = Callable[[str], tuple[Repository, str, str]]


def upload_pairs(
    target: WriteTarget,
    pairs: Sequence[tuple[str, str]],
    metadata: Mapping[str, str] | None = None,
) -> int:
    """Upload every ``(local file, remote path)``; returns how many. Every remote path is
    checked writable before anything is written (ReadOnlyRef, ReadOnlyBranch,
    PathNotFound)."""
    groups: dict[tuple[str, str], list[tuple[str, Path]]] = defaultdict(list)
    repos: dict[str, Repository] = {}
    for local, remote in pairs:
        repo, branch, key = target(remote)
        repos[repo.name] = repo
        groups[(repo.name, branch)].append((key, Path(local)))
    for (name, branch), items in groups.items():
        with translated(f"{name}/{branch}"):
            repos[name].upload_many(branch, items, metadata=metadata)
    return len(pairs)
