"""The parts of a table's metadata that a merge combines besides its main branch: schemas,
partition specs, sort orders, location, format version and properties
(:func:`merge_metadata`), the table's other refs and the statistics that go with their
snapshots (:func:`merge_refs`). See :mod:`graveler.tables.iceberg.merge`."""

from __future__ import annotations

from typing import Any

from graveler.tables.iceberg import jsonio
from graveler.tables.iceberg.basemeta import BaseMetadata
from graveler.tables.iceberg.conflicts import conflict
from graveler.tables.iceberg.snapshots import by_id, snapshot_ids

#: (conflict kind, what, metadata keys that change together)
GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "SchemaChanged",
        "schema",
        ("schemas", "current-schema-id", "last-column-id", "schema"),
    ),
    (
        "PartitionSpecChanged",
        "partition spec",
        ("partition-specs", "default-spec-id", "last-partition-id", "partition-spec"),
    ),
    ("SortOrderChanged", "sort order", ("sort-orders", "default-sort-order-id")),
    ("LocationChanged", "location", ("location",)),
    ("FormatVersionChanged", "format version", ("format-version",)),
    ("EncryptionChanged", "encryption keys", ("encryption-keys",)),
)


def _part(doc: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: doc.get(k) for k in keys}


def merge_metadata(
    root: str, base: BaseMetadata, source: dict[str, Any], dest: dict[str, Any]
) -> dict[str, Any]:
    """The destination's metadata with the source's schema, spec, sort order, location and
    property changes (a copy; TableConflict when both changed one of them differently).
    The base is parsed only where the two sides differ."""
    merged = dict(dest)  # the history arrays are shared: the merge only extends them anew
    merged["snapshots"] = dest.get("snapshots") or []
    for kind, what, keys in GROUPS:
        s, d = _part(source, keys), _part(dest, keys)
        if s == d:
            continue
        b = _part(base.doc, keys)
        if s == b:
            continue
        if d != b:
            raise conflict(
                root, kind, f"both sides changed the table's {what}, differently", None, None
            )
        for key, value in s.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
    if (source.get("properties") or {}) != (dest.get("properties") or {}):
        merged["properties"] = _properties(base.doc, source, dest)
    return merged


def _properties(
    base: dict[str, Any], source: dict[str, Any], dest: dict[str, Any]
) -> dict[str, str]:
    """The destination's properties with the source's changes applied (source wins a key
    both changed: its update is applied last, as a retried commit's would be)."""
    b, s = base.get("properties") or {}, source.get("properties") or {}
    out = dict(dest.get("properties") or {})
    for key in set(b) | set(s):
        if s.get(key) == b.get(key):
            continue
        if key in s:
            out[key] = s[key]
        else:
            out.pop(key, None)
    return out


def merge_refs(
    root: str,
    merged: dict[str, Any],
    base: BaseMetadata,
    source: dict[str, Any],
    dest: dict[str, Any],
    brought: set[int],
) -> None:
    """Carry the source's changes to refs other than ``main`` (with the snapshots they
    need) and the statistics of source snapshots kept as they are."""
    refs = dict(merged.get("refs") or {})
    s_refs, d_refs = (_others(d) for d in (source, dest))
    b_refs = d_refs if s_refs == d_refs else _others(base.doc)
    needed: set[int] = set()
    for name in sorted((set(b_refs) | set(s_refs)) - {"main"}):
        b, s, d = b_refs.get(name), s_refs.get(name), d_refs.get(name)
        if s in (b, d):
            continue
        if d != b:
            kind = (s or d or {}).get("type", "ref")
            raise conflict(root, "RefChanged", f"{kind} {name!r} changed on both sides", None, None)
        if s is None:
            refs.pop(name, None)
        else:
            refs[name] = s
            needed.add(int(s["snapshot-id"]))
    merged["refs"] = refs
    kept = brought | _carry(root, merged, source, needed)
    for key in ("statistics", "partition-statistics"):
        mine = [x for x in dest.get(key) or [] if isinstance(x, dict)]
        ids = {x.get("snapshot-id") for x in mine}
        extra = [
            x
            for x in source.get(key) or []
            if isinstance(x, dict)
            and x.get("snapshot-id") in kept
            and x.get("snapshot-id") not in ids
        ]
        if mine or extra:
            merged[key] = mine + extra


def _others(doc: dict[str, Any]) -> dict[str, Any]:
    """The refs of a table other than ``main``."""
    return {k: v for k, v in (doc.get("refs") or {}).items() if k != "main"}


def _carry(root: str, merged: dict[str, Any], source: dict[str, Any], needed: set[int]) -> set[int]:
    """Add the source snapshots that refs in ``needed`` reach and ``merged`` lacks; returns
    their IDs."""
    if not needed:
        return set()
    have = set(snapshot_ids(merged))
    theirs = by_id(source)
    carried: set[int] = set()
    for sid in sorted(needed):
        current: int | None = sid
        while current is not None and current not in have:
            snap = theirs.get(current)
            if snap is None:
                break
            have.add(current)
            carried.add(current)
            merged["snapshots"] = jsonio.extended(merged["snapshots"], [snap])
            current = snap.get("parent-snapshot-id")
    last = int(source.get("last-sequence-number", 0) or 0)
    if carried and last > int(merged.get("last-sequence-number", 0) or 0):
        merged["last-sequence-number"] = last
    return carried
