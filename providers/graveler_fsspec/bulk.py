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
from graveler_fsspec.paths import parse_path, require_key

#: Where a remote path is written: (repository, branch, key), checked writable.
WriteTarget = Callable[[str], tuple[Repository, str, str]]


def upload_pairs(
    target: WriteTarget,
    pairs: Sequence[tuple[str, str]],
    metadata: Mapping[str, str] | None = None,
) -> int:
    """Upload every ``(local file, remote path)``; returns how many. Every remote path is
    parsed, and each branch checked writable once, before anything is written (ReadOnlyRef,
    ReadOnlyBranch, PathNotFound)."""
    groups: dict[tuple[str, str], list[tuple[str, Path]]] = defaultdict(list)
    repos: dict[tuple[str, str], Repository] = {}
    for local, remote in pairs:
        p = require_key(parse_path(remote), remote)
        where = (p.repository, p.ref)
        if where not in repos:
            repos[where] = target(remote)[0]  # the branch's writable check, once
        groups[where].append((p.key, Path(local)))
    for (name, branch), items in groups.items():
        with translated(f"{name}/{branch}"):
            repos[(name, branch)].upload_many(branch, items, metadata=metadata)
    return len(pairs)
