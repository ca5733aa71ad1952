"""A table's snapshots as its metadata JSON lists them: the head of its ``main`` branch and
the snapshots that branch descends from. Pure dict walks, no pyiceberg, so the merge and the
diff (:mod:`graveler.tables.iceberg.diff`) share them without loading manifest readers."""

from __future__ import annotations

from typing import Any


def main_snapshot(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The snapshot the table's ``main`` branch points at, or None."""
    ref = (doc.get("refs") or {}).get("main")
    sid = ref.get("snapshot-id") if isinstance(ref, dict) else doc.get("current-snapshot-id")
    if sid is None or sid == -1:
        return None
    for snapshot in reversed(doc.get("snapshots") or ()):  # usually the last one
        if snapshot["snapshot-id"] == sid:
            found: dict[str, Any] = snapshot
            return found
    return None


def by_id(doc: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The table's snapshots by ID."""
    return {s["snapshot-id"]: s for s in doc.get("snapshots") or ()}


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
