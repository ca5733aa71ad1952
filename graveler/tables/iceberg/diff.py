"""An Iceberg table's difference between two commits, as table versions (snapshots).

Each side's table is the metadata file its pointer (``metadata/current.metadata.json``)
names; a side without the pointer has no table. The versions are the snapshots of the
table's ``main`` branch (:func:`graveler.tables.iceberg.snapshots.main_lineage`): those whose
snapshot ID only the right side's branch has are *added*, those only the left side's has are
*removed*, each oldest first. A snapshot a merge replayed keeps its ID, so it is the same
version on both sides. A table created on the right shows all its snapshots added and all
its columns added (and the reverse for a dropped one); snapshots expired on one side show as
that side lacking them.

Each snapshot is described from its summary alone, never from its manifests, so a diff reads
two metadata files however large the table's data is: ``operation``; files added and removed
(``added-data-files`` + ``added-delete-files``, ``deleted-data-files`` +
``removed-delete-files``); rows added and removed (``added-records``, ``deleted-records``;
unknown for a snapshot without a summary); and as parameters its sequence number, schema ID
and the summary's other entries (engine, position and equality delete counts...), leaving
out totals, file sizes and per-partition summaries. Iceberg omits a zero count, so a missing
count is 0.

The column changes compare the top-level fields of both sides' current schemas by field ID
(by name when the two sides are different tables, with different UUIDs): ``added``,
``removed``, ``changed`` (type or nullability) and ``renamed`` (same field, new name).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from graveler.core.errors import CorruptFile
from graveler.tables.iceberg import jsonio
from graveler.tables.iceberg.names import POINTER
from graveler.tables.iceberg.snapshots import main_lineage
from graveler.tables.port import ColumnChange, DiffSide, TableDiff, TableDiffContext, TableVersion

FORMAT = "iceberg"
PARAMETER_CHARS = 200
#: Summary keys the version's own fields carry: (added, removed) of files and of rows.
FILES_ADDED = ("added-data-files", "added-delete-files")
FILES_REMOVED = ("deleted-data-files", "removed-delete-files")
ROWS_ADDED, ROWS_REMOVED = "added-records", "deleted-records"
_COUNTED = {"operation", *FILES_ADDED, *FILES_REMOVED, ROWS_ADDED, ROWS_REMOVED}
#: Summary keys left out of the parameters besides those: totals, sizes, partitions.
_SKIPPED_PREFIXES = ("total-", "partitions.")
_SKIPPED = {"added-files-size", "removed-files-size", "partition-summaries-included"}


def diff_table(ctx: TableDiffContext) -> TableDiff:
    """How the Iceberg table at ``ctx.root`` differs from ``ctx.left`` to ``ctx.right``
    (see the module docstring); CorruptFile when a side's metadata is not Iceberg JSON."""
    left, right = _metadata(ctx, DiffSide.LEFT), _metadata(ctx, DiffSide.RIGHT)
    before, after = main_lineage(left), main_lineage(right)
    left_ids = {s["snapshot-id"] for s in before}
    right_ids = {s["snapshot-id"] for s in after}
    return TableDiff(
        ctx.root,
        FORMAT,
        added=tuple(describe(s) for s in after if s["snapshot-id"] not in left_ids),
        removed=tuple(describe(s) for s in before if s["snapshot-id"] not in right_ids),
        columns=column_changes(left, right),
    )


def _metadata(ctx: TableDiffContext, side: DiffSide) -> dict[str, Any] | None:
    """The metadata document of ``side``'s table, or None when the side has no table."""
    path = ctx.root + POINTER
    data = ctx.read(side, path)
    if data is None:
        return None
    try:
        doc = jsonio.loads(data)
    except ValueError as exc:
        raise CorruptFile(f"Iceberg metadata {path!r} at the {side.value} is not JSON") from exc
    if not isinstance(doc, dict) or not _snapshots_ok(doc.get("snapshots") or []):
        raise CorruptFile(f"Iceberg metadata {path!r} at the {side.value} is not table metadata")
    return doc


def _snapshots_ok(snapshots: Any) -> bool:
    """Whether ``snapshots`` is a list of objects, each with an integer ``snapshot-id``."""
    return isinstance(snapshots, list) and all(
        isinstance(s, dict) and isinstance(s.get("snapshot-id"), int) for s in snapshots
    )


def describe(snapshot: Mapping[str, Any]) -> TableVersion:
    """One snapshot as a table version: its ID is the version (see the module docstring)."""
    summary = snapshot.get("summary")
    counts = summary if isinstance(summary, Mapping) else None
    stamp = snapshot.get("timestamp-ms")
    return TableVersion(
        version=int(snapshot["snapshot-id"]),
        operation=str(counts.get("operation", "")) if counts else "(no summary)",
        timestamp=datetime.fromtimestamp(stamp / 1000, UTC) if isinstance(stamp, int) else None,
        files_added=_total(counts, FILES_ADDED) or 0,
        files_removed=_total(counts, FILES_REMOVED) or 0,
        rows_added=_total(counts, (ROWS_ADDED,)),
        rows_removed=_total(counts, (ROWS_REMOVED,)),
        parameters=parameters(snapshot, counts or {}),
    )


def _total(summary: Mapping[str, Any] | None, keys: Iterable[str]) -> int | None:
    """The sum of the summary's counts ``keys`` (a missing one is 0); None without a
    summary or when a count is not a number."""
    if summary is None:
        return None
    total = 0
    for key in keys:
        try:
            total += int(summary.get(key, 0))
        except (TypeError, ValueError):
            return None
    return total


def parameters(snapshot: Mapping[str, Any], summary: Mapping[str, Any]) -> dict[str, str]:
    """What a snapshot records besides its counts: sequence number, schema ID, and the
    summary entries that are not totals, sizes or per-partition (each cut to
    ``PARAMETER_CHARS``)."""
    out: dict[str, str] = {}
    for key in ("sequence-number", "schema-id"):
        if snapshot.get(key) is not None:
            out[key] = str(snapshot[key])
    for key, value in summary.items():
        if key in _COUNTED or key in _SKIPPED or key.startswith(_SKIPPED_PREFIXES):
            continue
        out[str(key)] = _text(value)
    return out


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= PARAMETER_CHARS else text[: PARAMETER_CHARS - 1] + "…"


# --- columns ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Column:
    name: str
    type: str


def column_changes(
    left: dict[str, Any] | None, right: dict[str, Any] | None
) -> tuple[ColumnChange, ...]:
    """The top-level columns that differ from ``left``'s current schema to ``right``'s,
    in the left schema's order then the right's new columns (see the module docstring)."""
    same = bool(left and right and left.get("table-uuid") == right.get("table-uuid"))
    before, after = _fields(left, by_id=same), _fields(right, by_id=same)
    changes: list[ColumnChange] = []
    for key in [*before, *(k for k in after if k not in before)]:
        changes.extend(_change(before.get(key), after.get(key)))
    return tuple(changes)


def _change(old: _Column | None, new: _Column | None) -> list[ColumnChange]:
    if old is None:
        return [] if new is None else [ColumnChange(new.name, "added", None, new.type)]
    if new is None:
        return [ColumnChange(old.name, "removed", old.type, None)]
    out = []
    if old.name != new.name:
        out.append(ColumnChange(new.name, "renamed", old.name, new.name))
    if old.type != new.type:
        out.append(ColumnChange(new.name, "changed", old.type, new.type))
    return out


def _fields(doc: dict[str, Any] | None, *, by_id: bool) -> dict[int | str, _Column]:
    """The current schema's top-level fields by field ID (or name), each with its type as
    Iceberg spells it (a nested type as compact JSON), ``not null`` when required."""
    out: dict[int | str, _Column] = {}
    for f in _current_schema(doc).get("fields") or ():
        if not isinstance(f, dict):
            continue
        kind = f.get("type")
        text = kind if isinstance(kind, str) else json.dumps(kind, separators=(",", ":"))
        name, field_id = str(f.get("name")), f.get("id")
        key: int | str = field_id if by_id and isinstance(field_id, int) else name
        out[key] = _Column(name, f"{text} not null" if f.get("required") else text)
    return out


def _current_schema(doc: dict[str, Any] | None) -> dict[str, Any]:
    """The schema ``current-schema-id`` names (format v1's ``schema`` when there is no
    ``schemas`` list); empty for no table."""
    if doc is None:
        return {}
    current = doc.get("current-schema-id")
    for schema in doc.get("schemas") or ():
        if isinstance(schema, dict) and schema.get("schema-id") == current:
            return schema
    single = doc.get("schema")
    return single if isinstance(single, dict) else {}
