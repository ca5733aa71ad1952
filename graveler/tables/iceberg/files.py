"""The files a table's metadata references, and the tree changes that a new metadata needs.

A ref's tree holds, under a table's root, exactly the files its current metadata references
(see :mod:`graveler.tables.iceberg.names`): every snapshot's manifest list, the manifests it
lists, the live data and delete files of those manifests, and statistics files. When a table
moves from one metadata to the next, :func:`transition` works out the entries to add and
remove:

* snapshots were only added (every commit but maintenance): only the new snapshots' manifest
  lists are read, and only manifests not yet in the tree are opened, so the cost follows the
  commit, not the table;
* snapshots or statistics were removed, or the location moved: the files of both metadata
  are listed in full and compared (what expiring snapshots costs in Iceberg too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.manifest import ManifestEntry, ManifestFile, read_manifest_list

from graveler.core.errors import CorruptFile, GravelerError
from graveler.storage.entry import ObjectEntry
from graveler.tables.iceberg.fileio import NamespaceIO
from graveler.tables.iceberg.names import key_for
from graveler.tables.iceberg.snapshots import appended, snapshot_ids, snapshots_except

#: Which of these keys the tree already has.
Present = Callable[[list[str]], set[str]]
#: The entry for a file to add: (key, address) -> entry.
EntryFor = Callable[[str, str], ObjectEntry]


def manifests(io: NamespaceIO, snapshot: dict[str, Any]) -> list[ManifestFile]:
    """The manifests a snapshot lists."""
    uri = snapshot.get("manifest-list")
    if isinstance(uri, str):
        try:
            return list(read_manifest_list(io.new_input(uri)))
        except GravelerError:
            raise
        except (OSError, ValueError, EOFError) as exc:
            raise CorruptFile(f"manifest list {uri} cannot be read: {exc}") from exc
    raise CorruptFile(f"snapshot {snapshot.get('snapshot-id')} has no manifest list")


def entries(io: NamespaceIO, manifest: ManifestFile, *, live: bool = True) -> list[ManifestEntry]:
    """A manifest's entries (the live ones only, unless ``live`` is False), sequence numbers
    inherited from the manifest list."""
    try:
        return manifest.fetch_manifest_entry(io, discard_deleted=live)
    except GravelerError:
        raise
    except (OSError, ValueError, EOFError) as exc:
        raise CorruptFile(f"manifest {manifest.manifest_path} cannot be read: {exc}") from exc


def snapshot_files(io: NamespaceIO, snapshot: dict[str, Any], seen: set[str]) -> Iterator[str]:
    """URIs of a snapshot's files: its manifest list, and the manifests not in ``seen`` with
    their live files (``seen`` gains the manifests)."""
    yield snapshot["manifest-list"]
    for manifest in manifests(io, snapshot):
        if manifest.manifest_path in seen:
            continue
        seen.add(manifest.manifest_path)
        yield manifest.manifest_path
        for entry in entries(io, manifest):
            yield entry.data_file.file_path


def statistics_files(doc: dict[str, Any]) -> set[str]:
    found = set()
    for name in ("statistics", "partition-statistics"):
        for item in doc.get(name) or ():
            if isinstance(item, dict) and isinstance(item.get("statistics-path"), str):
                found.add(item["statistics-path"])
    return found


def referenced(io: NamespaceIO, doc: dict[str, Any]) -> set[str]:
    """URIs of every file ``doc`` references."""
    seen: set[str] = set()
    found = statistics_files(doc)
    for snapshot in doc.get("snapshots") or ():
        found.update(snapshot_files(io, snapshot, seen))
    return found


@dataclass
class FileChanges:
    """Entries to add (key -> entry) and keys to remove under one table root."""

    added: dict[str, ObjectEntry] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)


def transition(
    io: NamespaceIO,
    root: str,
    old: dict[str, Any] | None,
    new: dict[str, Any],
    present: Present,
    entry_for: EntryFor,
) -> FileChanges:
    """What the tree under ``root`` needs to go from metadata ``old`` (None: no table) to
    ``new`` (see the module docstring). Every file must lie in the namespace's ``data/``
    area (InvalidArgument)."""
    location = io.address(new["location"])
    old_ids = set(snapshot_ids(old))
    # a merge's metadata extends the destination's history: nothing in it was removed
    extra = appended(old, new)
    removed = extra is None and bool(old_ids - set(snapshot_ids(new)))
    reshaped = old is not None and (
        removed
        or bool(statistics_files(old) - statistics_files(new))
        or old.get("location") != new.get("location")
    )
    if reshaped:
        assert old is not None
        return _full(io, root, location, old, new, present, entry_for)
    uris = statistics_files(new) - (statistics_files(old) if old else set())
    seen: set[str] = set()
    if extra is None:
        added = snapshots_except(new, old_ids)
    else:
        added = [s for s in extra if s.get("snapshot-id") not in old_ids]
    for snapshot in added:
        uris.update(_new_files(io, root, location, snapshot, seen, present))
    return _adding(io, root, location, uris, present, entry_for)


def _new_files(
    io: NamespaceIO,
    root: str,
    location: str,
    snapshot: dict[str, Any],
    seen: set[str],
    present: Present,
) -> Iterator[str]:
    """The manifest list of a new snapshot and its manifests not in the tree yet, with
    their files (a manifest in the tree has all its files there too)."""
    yield snapshot["manifest-list"]
    listed = [m for m in manifests(io, snapshot) if m.manifest_path not in seen]
    seen.update(m.manifest_path for m in listed)
    keys = [key_for(root, location, io.address(m.manifest_path)) for m in listed]
    there = present(keys)
    for manifest, key in zip(listed, keys, strict=True):
        if key in there:
            continue
        yield manifest.manifest_path
        for entry in entries(io, manifest):
            yield entry.data_file.file_path


def _adding(
    io: NamespaceIO,
    root: str,
    location: str,
    uris: Iterable[str],
    present: Present,
    entry_for: EntryFor,
) -> FileChanges:
    wanted: dict[str, str] = {}
    for uri in uris:
        address = io.address(uri)
        wanted[key_for(root, location, address)] = address
    there = present(sorted(wanted))
    out = FileChanges()
    for key in sorted(wanted):
        if key not in there:
            out.added[key] = entry_for(key, wanted[key])
    return out


def _full(
    io: NamespaceIO,
    root: str,
    location: str,
    old: dict[str, Any],
    new: dict[str, Any],
    present: Present,
    entry_for: EntryFor,
) -> FileChanges:
    old_location = io.address(old["location"])
    before = {key_for(root, old_location, io.address(u)) for u in referenced(io, old)}
    now = {key_for(root, location, io.address(u)): io.address(u) for u in referenced(io, new)}
    out = _adding(io, root, location, [io.uri(a) for a in now.values()], present, entry_for)
    out.removed = before - set(now)
    return out
