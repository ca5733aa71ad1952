"""What one read sees: the ref resolved once, the live files listed once, partitions discovered.

The driver resolves the ref and lists the objects at the path (:func:`take_snapshot`). A tag or
commit ID is pinned to its commit, whose objects are write-once, so reading it again returns the
same rows; a branch is read with its staged changes. Skipped, as Spark's file sources skip them:
every path with a component below the base that starts with ``.``, or with ``_`` and holds no
``=`` (``_SUCCESS``, ``_delta_log/``, checksums, graveler's table markers). Files that a later
overwrite replaced are not live (see :mod:`graveler_spark.tables`) and are skipped too.

Partitions are discovered from the logical keys below the *base*: the read path, or the option
``basePath`` (a path in the same ref, or a ``graveler://`` URI of it) when reading a sub-prefix
such as ``tables/events/date=2024-01-01`` that should keep its ``date`` column.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graveler import ClientSettings, shared_client
from graveler import uri as uris
from graveler.errors import InvalidArgument, ObjectNotFound
from graveler_spark.options import Target
from graveler_spark.partitions import discover
from graveler_spark.tables import PARTITION_MARKER, TABLE_MARKER, Generations, is_marker

if TYPE_CHECKING:
    import pyarrow as pa

    from graveler import ObjectEntry, Repository


@dataclass(frozen=True)
class FileRef:
    path: str  # the object's path in the repository
    address: str  # physical address relative to the namespace
    size: int
    values: tuple[Any, ...] = ()  # partition values, typed, in Snapshot.partition_columns order


@dataclass(frozen=True)
class Snapshot:
    """The live files of one read; ``commit_id`` is the commit the ref resolved to."""

    namespace: str
    commit_id: str
    files: tuple[FileRef, ...]
    partition_columns: tuple[str, ...] = ()
    partition_types: tuple[pa.DataType, ...] = ()


def take_snapshot(
    settings: ClientSettings, target: Target, base: str | None = None, infer: bool = True
) -> Snapshot:
    """Resolve ``target.ref`` once and list the live objects at ``target.path`` (an object,
    or a prefix read as a directory); ``base`` is the ``basePath`` option, if given."""
    gv = shared_client(settings)  # one per process and settings
    return snapshot_of(gv.repository(target.repository), target, base, infer)


def snapshot_of(
    repo: Repository, target: Target, base: str | None = None, infer: bool = True
) -> Snapshot:
    """:func:`take_snapshot` with an open repository."""
    resolved = repo.resolve(target.ref)
    ref = target.ref if resolved.branch is not None else resolved.commit.id
    root = base_path(target, base)
    entries, markers = _listing(repo, ref, target.path, root)
    generations = Generations.from_entries(markers)
    live = [e for e in entries if generations.live(e)]
    layout = discover([_relative(root, e.path) for e in live], infer_types=infer)
    files = tuple(
        FileRef(e.path, e.physical_address, e.size, layout.values(i)) for i, e in enumerate(live)
    )
    return Snapshot(
        repo.info.storage_namespace, resolved.commit.id, files, layout.columns, layout.types
    )


def base_path(target: Target, base: str | None) -> str:
    """The directory partition discovery starts from (the read path without ``basePath``)."""
    if base is None:
        return target.path
    path = base
    if "://" in base:
        parsed = uris.require(base, ref=True)
        if (parsed.repository, parsed.ref) != (target.repository, target.ref):
            raise InvalidArgument(
                f"basePath {base!r} must be in the read's repository and ref ({target.uri})"
            )
        path = parsed.path or ""
    path = path.strip("/")
    if path and target.path != path and not target.path.startswith(path + "/"):
        raise InvalidArgument(f"basePath {base!r} is not a parent of {target.uri}")
    return path


def _listing(
    repo: Repository, ref: str, path: str, root: str
) -> tuple[list[ObjectEntry], list[ObjectEntry]]:
    """(data entries, marker entries) at ``path``, plus markers in directories above it."""
    entries: list[ObjectEntry] = []
    markers: list[ObjectEntry] = []
    for e in _entries(repo, ref, path):
        if is_marker(e.path):
            markers.append(e)
        elif not _hidden(_relative(root, e.path) if root else e.path):
            entries.append(e)
    markers.extend(_markers_above(repo, ref, path))
    return entries, markers


def _entries(repo: Repository, ref: str, path: str) -> Iterator[ObjectEntry]:
    if path:
        try:
            yield repo.stat(ref, path)
            return
        except ObjectNotFound:
            pass
    yield from repo.iter_objects(ref, f"{path}/" if path else "")


def _markers_above(repo: Repository, ref: str, path: str) -> list[ObjectEntry]:
    """Table and partition markers in every directory above ``path`` (a few point reads)."""
    parts = path.split("/") if path else []
    dirs = ["/".join(parts[:i]) for i in range(len(parts))]
    keys = [f"{d}/{name}" if d else name for d in dirs for name in (TABLE_MARKER, PARTITION_MARKER)]
    return [e for e in repo.stat_many(ref, keys) if e is not None] if keys else []


def _relative(root: str, path: str) -> str:
    """``path`` below the directory ``root`` (a single object read is its own name)."""
    if path == root:
        return path.rsplit("/", 1)[-1]
    return path[len(root) + 1 :] if root and path.startswith(root + "/") else path


def _hidden(relative: str) -> bool:
    """Spark's rule for names its file sources skip, applied to every component."""
    return any(
        part.startswith(".") or (part.startswith("_") and "=" not in part)
        for part in relative.split("/")
    )
