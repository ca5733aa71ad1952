"""A table's snapshots as its metadata JSON lists them: the head of its ``main`` branch and
the snapshots that branch descends from. Pure dict walks, no pyiceberg, so the merge and the
diff (:mod:`graveler.tables.iceberg.diff`) share them without loading manifest readers."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from graveler.tables.iceberg.jsonio import MISSING, LazyArray


def main_snapshot(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The snapshot the table's ``main`` branch points at, or None."""
    ref = (doc.get("refs") or {}).get("main")
    sid = ref.get("snapshot-id") if isinstance(ref, dict) else doc.get("current-snapshot-id")
    if sid is None or sid == -1:
        return None
    if isinstance(doc.get("snapshots"), LazyArray):
        return by_id(doc).get(sid)
    for snapshot in reversed(doc.get("snapshots") or ()):  # usually the last one
        if snapshot["snapshot-id"] == sid:
            found: dict[str, Any] = snapshot
            return found
    return None


def by_id(doc: dict[str, Any]) -> Mapping[int, dict[str, Any]]:
    """The table's snapshots by ID (of a :class:`LazyArray`, each decoded when asked for)."""
    snapshots = doc.get("snapshots") or ()
    if isinstance(snapshots, LazyArray):
        return _ByID(snapshots)
    return {s["snapshot-id"]: s for s in snapshots}


def snapshot_ids(doc: dict[str, Any] | None) -> Sequence[int]:
    """The IDs of the table's snapshots, in the order the metadata lists them."""
    snapshots = (doc or {}).get("snapshots") or ()
    if isinstance(snapshots, LazyArray):
        return snapshots.values_of("snapshot-id")
    return [s["snapshot-id"] for s in snapshots]


def snapshots_except(doc: dict[str, Any], ids: set[int]) -> list[dict[str, Any]]:
    """The table's snapshots whose ID is not in ``ids``, in order (of a LazyArray, only
    those are decoded)."""
    snapshots = doc.get("snapshots") or ()
    if isinstance(snapshots, LazyArray):
        listed = snapshots.values_of("snapshot-id")
        return [snapshots[i] for i, sid in enumerate(listed) if sid not in ids]
    return [s for s in snapshots if s["snapshot-id"] not in ids]


def appended(old: dict[str, Any] | None, new: dict[str, Any]) -> list[Any] | None:
    """The snapshots ``new`` lists after all of ``old``'s, when its list is known to be
    ``old``'s extended (a :class:`LazyArray` made from it by adding); else None."""
    before = (old or {}).get("snapshots")
    after = new.get("snapshots")
    if isinstance(before, LazyArray) and isinstance(after, LazyArray):
        return after.added_since(before)
    return None


class _ByID(Mapping[int, dict[str, Any]]):
    """Snapshots of a LazyArray by ID, each decoded when looked up: found from the array's
    end (a merge looks up the newest), else through the IDs read in one pass (a later
    duplicate ID wins, as in a dict built in order)."""

    def __init__(self, snapshots: LazyArray) -> None:
        self._snapshots = snapshots

    def __getitem__(self, sid: int) -> dict[str, Any]:
        found: dict[str, Any] = self._snapshots.find_last("snapshot-id", sid)
        if found is MISSING or sid is None:
            raise KeyError(sid)
        return found

    def __iter__(self) -> Iterator[int]:
        return iter(self._snapshots.positions("snapshot-id"))

    def __len__(self) -> int:
        return len(self._snapshots.positions("snapshot-id"))


def main_lineage(doc: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The snapshots of the ``main`` branch, oldest first: its head and the ancestors the
    metadata still lists (the walk stops at an expired parent). Empty for no table."""
    if doc is None:
        return []
    snapshots = by_id(doc)
    found: list[dict[str, Any]] = []
    seen: set[int] = set()
    current = main_snapshot(doc)
    while current is not None and current["snapshot-id"] not in seen:
        seen.add(current["snapshot-id"])
        found.append(current)
        parent = current.get("parent-snapshot-id")
        current = snapshots.get(parent) if parent is not None else None
    return found[::-1]
