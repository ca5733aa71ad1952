"""Listing: turning refs, repositories and object entries into fsspec info dictionaries.

Directories are implicit, as in S3: ``a/b`` is a directory when some object key starts with
``a/b/``. Above the keys, the root lists repositories and a repository lists its branches
(tags and commits are reachable by name but not listed, so ``find`` on a repository walks
each branch once). Nothing is cached: every listing reads the ref as it is now, so a listing
is never stale across branches or after a commit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from graveler import ObjectEntry, Repository
from graveler_fsspec.paths import GravelerPath

PAGE = 1000
Info = dict[str, Any]


def file_info(name: str, entry: ObjectEntry) -> Info:
    """The info dictionary of an object: fsspec's ``name``/``size``/``type`` plus graveler's
    own fields (``checksum`` is the hex sha256 of the content)."""
    return {
        "name": name,
        "size": entry.size,
        "type": "file",
        "checksum": entry.checksum,
        "mtime": entry.mtime,
        "content_type": entry.content_type,
        "metadata": dict(entry.metadata),
        "physical_address": entry.physical_address,
    }


def dir_info(name: str, **extra: Any) -> Info:
    return {"name": name, "size": 0, "type": "directory", **extra}


def pinned_ref(repo: Repository, ref: str) -> str:
    """A ref that keeps naming the same tree while a listing is paged: a branch stays a branch
    (its reads include staging), anything else becomes its commit ID."""
    resolved = repo.resolve(ref)
    return ref if resolved.branch is not None else resolved.commit.id


def children(repo: Repository, path: GravelerPath) -> Iterator[Info]:
    """The immediate children of a directory path, page by page, in key order."""
    ref = pinned_ref(repo, path.ref)
    after = ""
    while True:
        page = repo.list(ref, path.dir_prefix, delimiter="/", after=after, amount=PAGE)
        merged = sorted(
            [(e.path, file_info(path.join(e.path), e)) for e in page.objects]
            + [(p, dir_info(path.join(p.rstrip("/")))) for p in page.common_prefixes],
            key=lambda item: item[0],
        )
        for _, info in merged:
            yield info
        if page.next_after is None:
            return
        after = page.next_after


def has_children(repo: Repository, path: GravelerPath) -> bool:
    """Whether any object key starts with ``path``'s directory prefix."""
    page = repo.list(path.ref, path.dir_prefix, delimiter="/", amount=1)
    return bool(page.objects or page.common_prefixes)


def walk_files(repo: Repository, path: GravelerPath, withdirs: bool) -> Iterator[tuple[str, Info]]:
    """Every object under a directory path in one scan, plus (``withdirs``) every implicit
    directory between ``path`` and each object, each once."""
    ref = pinned_ref(repo, path.ref)
    prefix = path.dir_prefix
    seen_dirs: set[str] = set()
    for entry in repo.iter_objects(ref, prefix):
        if withdirs:
            yield from _new_dirs(path, entry.path, len(prefix), seen_dirs)
        name = path.join(entry.path)
        yield name, file_info(name, entry)


def _new_dirs(
    path: GravelerPath, key: str, start: int, seen: set[str]
) -> Iterator[tuple[str, Info]]:
    cut = key.find("/", start)
    while cut >= 0:
        directory = key[:cut]
        if directory not in seen:
            seen.add(directory)
            name = path.join(directory)
            yield name, dir_info(name)
        cut = key.find("/", cut + 1)
