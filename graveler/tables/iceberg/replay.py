"""Replaying a source snapshot on the destination's main branch, as Iceberg retries a commit.

* **What to replay:** the source's main-branch snapshots since the merge base, oldest first
  (:func:`lineage`): a walk from the source's head back to the base's head snapshot, which
  must be found (same ID and manifest list), else the source rewrote its history (a rollback,
  an expiry) and the merge refuses.
* **Against what:** everything the destination changed since the base (:func:`live_diff`),
  compared as live files: only manifests that differ between the two heads are read, so a
  table's history length does not matter, and the destination's own merges count right.
* **How:** each replayed snapshot gets the next sequence number and a new manifest list: its
  own new manifests (reused when they only add files, rewritten when they also carried
  deletes or its ID had to change) followed by the destination's manifests, where the
  manifests holding files it removes are rewritten with those files marked deleted.
  The snapshot keeps its ID unless the destination already has that ID.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus, ManifestFile

from graveler.tables.iceberg.conflicts import conflict
from graveler.tables.iceberg.fileio import NamespaceIO
from graveler.tables.iceberg.files import entries, manifests
from graveler.tables.iceberg.manifests import (
    Changes,
    FileRef,
    TableModel,
    file_ref,
    own_manifests,
    with_sequence,
    write_entries,
    write_list,
)
from graveler.tables.iceberg.snapshots import by_id, main_snapshot

#: Summary totals and the added / removed counts that move them.
TOTALS = (
    ("total-records", "added-records", "deleted-records"),
    ("total-data-files", "added-data-files", "deleted-data-files"),
    ("total-delete-files", "added-delete-files", "removed-delete-files"),
    ("total-files-size", "added-files-size", "removed-files-size"),
    ("total-position-deletes", "added-position-deletes", "removed-position-deletes"),
    ("total-equality-deletes", "added-equality-deletes", "removed-equality-deletes"),
)


def same(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """The same snapshot: same ID and manifest list (a replayed copy keeps the ID only)."""
    if a is None or b is None:
        return a is b
    return bool(
        a["snapshot-id"] == b["snapshot-id"] and a.get("manifest-list") == b.get("manifest-list")
    )


def lineage(root: str, doc: dict[str, Any], base: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The source's main-branch snapshots after ``base``, oldest first (see the module
    docstring); TableConflict when ``base`` is not among their ancestors."""
    snapshots = by_id(doc)
    found: list[dict[str, Any]] = []
    current = main_snapshot(doc)
    while current is not None and not same(current, base):
        found.append(current)
        parent = current.get("parent-snapshot-id")
        current = snapshots.get(parent) if parent is not None else None
        if parent is not None and current is None:
            break
    if not same(current, base):
        head = main_snapshot(doc)
        raise conflict(
            root,
            "HistoryRewritten",
            "the source's main branch does not descend from the merge base's snapshot "
            f"{base['snapshot-id'] if base else None} (rolled back, expired, or merged back "
            "from the destination): merge with a strategy to take one side",
            head["snapshot-id"] if head else None,
            None,
        )
    return found[::-1]


def live_diff(io: NamespaceIO, base: dict[str, Any] | None, head: dict[str, Any] | None) -> Changes:
    """Files live at ``head`` and not at ``base`` (added), and the reverse (removed)."""
    before = {m.manifest_path: m for m in (manifests(io, base) if base else [])}
    after = {m.manifest_path: m for m in (manifests(io, head) if head else [])}
    old = _live(io, (m for p, m in before.items() if p not in after))
    new = _live(io, (m for p, m in after.items() if p not in before))
    return Changes(
        added=[f for p, f in new.items() if p not in old],
        removed=[f for p, f in old.items() if p not in new],
    )


def _live(io: NamespaceIO, listed: Iterable[ManifestFile]) -> dict[str, FileRef]:
    return {e.data_file.file_path: file_ref(e) for m in listed for e in entries(io, m)}


@dataclass
class Step:
    """The merged main branch so far: its head snapshot and last sequence number."""

    head: dict[str, Any] | None
    last_sequence: int
    taken: set[int]  # snapshot IDs in use
    last_ms: int


def replay(
    io: NamespaceIO,
    table: TableModel,
    snapshot: dict[str, Any],
    mine: Changes,
    step: Step,
    extra_removed: dict[str, ManifestEntry],
) -> dict[str, Any]:
    """Apply ``snapshot`` (whose changes are ``mine``) on ``step.head``; returns the new
    snapshot and advances ``step``. ``extra_removed`` are further files it removes (the
    destination's files in partitions a dynamic overwrite replaces)."""
    old_id = snapshot["snapshot-id"]
    sid = old_id if old_id not in step.taken else _fresh_id(step.taken)
    seq = step.last_sequence + 1
    old_seq = int(snapshot.get("sequence-number") or 0)
    removing = mine.paths("removed") | set(extra_removed)
    listed = _own(io, table, snapshot, sid, old_seq, seq)
    listed += _carried(io, table, step.head, sid, removing)
    parent = step.head["snapshot-id"] if step.head else None
    uri = write_list(io, table, sid, parent, seq, listed)
    now = max(int(time.time() * 1000), step.last_ms + 1)
    new = {
        **snapshot,
        "snapshot-id": sid,
        "sequence-number": seq,
        "timestamp-ms": now,
        "manifest-list": uri,
        "summary": _summary(snapshot, step.head, extra_removed.values()),
    }
    if parent is None:
        new.pop("parent-snapshot-id", None)
    else:
        new["parent-snapshot-id"] = parent
    step.head, step.last_sequence, step.last_ms = new, seq, now
    step.taken.add(sid)
    return new


def _fresh_id(taken: set[int]) -> int:
    while True:
        candidate = random.getrandbits(63)
        if candidate and candidate not in taken:
            return candidate


def _own(
    io: NamespaceIO, table: TableModel, snapshot: dict[str, Any], sid: int, old: int, new: int
) -> list[ManifestFile]:
    """The snapshot's own manifests for the replay: reused when they only add files (and
    the ID is kept), else rewritten with only the files it added."""
    out: list[ManifestFile] = []
    old_id = snapshot["snapshot-id"]
    for manifest in own_manifests(io, snapshot):
        pure = not manifest.existing_files_count and not manifest.deleted_files_count
        if pure and sid == old_id:
            out.append(with_sequence(manifest, old, new))
            continue
        added = [
            e
            for e in entries(io, manifest, live=False)
            if e.status == ManifestEntryStatus.ADDED and e.snapshot_id == old_id
        ]
        for e in added:
            if e.sequence_number == old:
                e.sequence_number = None  # type: ignore[assignment]  # inherit the new number
        if added:
            written = write_entries(io, table, manifest, sid, [("added", e) for e in added])
            out.append(written)
    return out


def _carried(
    io: NamespaceIO, table: TableModel, head: dict[str, Any] | None, sid: int, removing: set[str]
) -> list[ManifestFile]:
    """The current head's manifests, those holding removed files rewritten."""
    out: list[ManifestFile] = []
    for manifest in manifests(io, head) if head else []:
        if not removing:
            out.append(manifest)
            continue
        live = entries(io, manifest)
        if not any(e.data_file.file_path in removing for e in live):
            out.append(manifest)
            continue
        rows = [("deleted" if e.data_file.file_path in removing else "existing", e) for e in live]
        out.append(write_entries(io, table, manifest, sid, rows))
    return out


def _summary(
    snapshot: dict[str, Any], head: dict[str, Any] | None, extra: Iterable[ManifestEntry]
) -> dict[str, str]:
    """The snapshot's summary with the counts of extra removed files and totals recomputed
    over the new parent."""
    summary = {k: str(v) for k, v in (snapshot.get("summary") or {}).items()}
    more = list(extra)
    if more:
        data = [e for e in more if e.data_file.content == 0]
        _bump(summary, "deleted-data-files", len(data))
        _bump(summary, "deleted-records", sum(e.data_file.record_count for e in data))
        _bump(summary, "removed-files-size", sum(e.data_file.file_size_in_bytes for e in more))
        _bump(summary, "removed-delete-files", len(more) - len(data))
    before = (head or {}).get("summary") or {}
    for total, added, removed in TOTALS:
        summary.pop(total, None)
        if head is None:
            base = 0
        elif total in before:
            base = int(before[total])
        else:
            continue
        summary[total] = str(base + int(summary.get(added, 0)) - int(summary.get(removed, 0)))
    return summary


def _bump(summary: dict[str, str], key: str, by: int) -> None:
    if by:
        summary[key] = str(int(summary.get(key, 0)) + by)
