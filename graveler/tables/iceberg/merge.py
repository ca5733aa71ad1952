"""The logical merge of an Iceberg table that both sides of a graveler merge changed.

:func:`merge_table` reads the table's metadata at the merge base, the source and the
destination, and builds the merged metadata on top of the destination's:

* schemas, partition specs and sort orders, the location: taken from the side that changed
  them; changed on both sides, they must be identical, else TableConflict;
* properties: the source's changes applied over the destination's (a retried commit's
  property updates win, as in Iceberg);
* the table's main branch: the source's new snapshots replayed on the destination's
  (:mod:`.replay`, validated by :mod:`.conflicts`), or taken as they are when the
  destination did not move it;
* the table's other refs (Iceberg branches and tags): carried over from the source with the
  snapshots they need; one ref changed differently on both sides conflicts.

The new metadata and manifest files are written to the table's location, and the merge
commit gets the pointer to the new metadata and an entry for every file it references that
the destination did not have. When only one side changed the table (the other side's
pointer is the base's), that side's table is taken as it is.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, NamedTuple

from graveler.storage.entry import ObjectEntry
from graveler.tables.iceberg import jsonio
from graveler.tables.iceberg.basemeta import BaseMetadata
from graveler.tables.iceberg.commit import JSON_TYPE, entry_of, metadata_address, present_at
from graveler.tables.iceberg.conflicts import check, conflict
from graveler.tables.iceberg.fileio import NamespaceIO
from graveler.tables.iceberg.files import transition
from graveler.tables.iceberg.manifests import TableModel, live_at, snapshot_changes
from graveler.tables.iceberg.metamerge import merge_metadata, merge_refs
from graveler.tables.iceberg.names import POINTER, key_for
from graveler.tables.iceberg.replay import Step, lineage, live_diff, replay, same
from graveler.tables.iceberg.snapshots import main_snapshot, snapshot_ids
from graveler.tables.port import Side, TableChange, TableMergeContext
from graveler.versioning.writes import make_linked_entry
from graveler.views.reads import EarlyRead, early_reads, stat_many

MAX_METADATA_LOG = 100


def merge_table(ctx: TableMergeContext) -> list[TableChange]:
    """The changes that turn the destination's table into the merged one (see the module
    docstring); TableConflict when Iceberg's rules refuse the merge."""
    pointer = ctx.root + POINTER
    base, source, dest = (ctx.stat(side, pointer) for side in (Side.BASE, Side.SOURCE, Side.DEST))
    if source is None or dest is None:
        gone = "source" if source is None else "destination"
        message = f"the {gone} dropped the table, the other side changed it"
        raise conflict(ctx.root, "TableDropped", message, None, None)
    if base is not None and dest.checksum == base.checksum:
        return list(ctx.changes(Side.SOURCE))
    if base is not None and source.checksum == base.checksum:
        return []
    # the three metadata files (each the table's whole history) are read and checked at
    # once, and parsed while they are checked: nothing is decided before the checks end
    reads = early_reads(ctx.repo, [entry for entry in (source, dest, base) if entry])
    with _quiet_gc():  # what a merge decodes of a long history: many objects, none cyclic
        with _checked(reads):
            mine, theirs = (jsonio.loads_metadata(done.unchecked()) for done in reads[:2])
            if base is None or mine.get("table-uuid") != theirs.get("table-uuid"):
                message = "the table was created or replaced separately on the two sides"
                raise conflict(ctx.root, "TableReplaced", message, None, None)
            known = BaseMetadata(reads[2].unchecked, mine, theirs)
            merged = merge_metadata(ctx.root, known, mine, theirs)
            plan = _plan_main(ctx.root, known, mine, theirs)
        # the files the merge writes are flushed in the background; the tree waits for them
        io = NamespaceIO(ctx.repo.store, ctx.repo.info.storage_namespace, deferred=True)
        brought = _merge_main(ctx, io, merged, plan, mine, theirs)
        merge_refs(ctx.root, merged, known, mine, theirs, brought)
        changes = _changes(ctx, io, merged, (dest, theirs))
        ctx.flushing.extend(io.flushing)
        return changes


@contextlib.contextmanager
def _checked(reads: list[EarlyRead]) -> Iterator[None]:
    """Leaving the block, normally or not, waits for every read's check: a damaged file is
    reported as such (CorruptFile), not as whatever its bytes made the block raise."""
    try:
        yield
    finally:
        for done in reads:
            done.checked()


@contextlib.contextmanager
def _quiet_gc() -> Iterator[None]:
    """No cyclic garbage collection while large JSON documents are built and dropped."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _MainPlan(NamedTuple):
    """What the merge of the tables' ``main`` branches starts from."""

    base: dict[str, Any] | None  # the base's main snapshot
    dest: dict[str, Any] | None  # the destination's
    todo: list[dict[str, Any]]  # the source's snapshots since the base, oldest first
    taken: set[int]  # the destination's snapshot IDs (empty when there is nothing to do)


def _plan_main(
    root: str, base: BaseMetadata, source: dict[str, Any], dest: dict[str, Any]
) -> _MainPlan:
    b_main, d_main = base.main(), main_snapshot(dest)
    todo = lineage(root, source, b_main)
    return _MainPlan(b_main, d_main, todo, set(snapshot_ids(dest)) if todo else set())


def _merge_main(
    ctx: TableMergeContext,
    io: NamespaceIO,
    merged: dict[str, Any],
    plan: _MainPlan,
    source: dict[str, Any],
    dest: dict[str, Any],
) -> set[int]:
    """Bring the source's main-branch snapshots into ``merged``; returns the IDs of the
    source snapshots now in it under their own ID and content (for the refs)."""
    b_main, d_main, todo, taken = plan
    if not todo:
        return set()
    if same(d_main, b_main):
        for snap in todo:
            if snap["snapshot-id"] in taken:
                raise conflict(
                    ctx.root,
                    "SnapshotIdCollision",
                    f"snapshot ID {snap['snapshot-id']} is on both sides",
                    snap["snapshot-id"],
                    None,
                )
        merged["snapshots"] = jsonio.extended(merged["snapshots"], todo)
        merged["last-sequence-number"] = max(
            int(source.get("last-sequence-number", 0)), int(dest.get("last-sequence-number", 0))
        )
        _set_main(merged, todo[-1], [(s["snapshot-id"], s["timestamp-ms"]) for s in todo])
        return {s["snapshot-id"] for s in todo}
    if int(merged.get("format-version", 2)) > 2:
        s_main = main_snapshot(source)
        raise conflict(
            ctx.root,
            "UnsupportedFormatVersion",
            "replaying snapshots of a format-version 3 table is not supported yet",
            s_main and s_main["snapshot-id"],
            d_main and d_main["snapshot-id"],
        )
    _replay_all(ctx, io, merged, todo, b_main, d_main, taken)
    return set()


def _replay_all(
    ctx: TableMergeContext,
    io: NamespaceIO,
    merged: dict[str, Any],
    todo: list[dict[str, Any]],
    b_main: dict[str, Any] | None,
    d_main: dict[str, Any] | None,
    taken: set[int],
) -> None:
    theirs = live_diff(io, b_main, d_main)
    table = TableModel.of(merged)
    step = Step(
        d_main,
        int(merged.get("last-sequence-number", 0)),
        taken,
        int(merged.get("last-updated-ms", 0)),
    )
    present = present_at(ctx.repo, ctx.dest)
    location = io.address(merged["location"])
    d_id = d_main["snapshot-id"] if d_main else None
    log: list[tuple[int, int]] = []
    for snap in todo:
        mine = snapshot_changes(io, snap)
        check(ctx.root, snap, mine, theirs, d_id)
        keys = [key_for(ctx.root, location, io.address(f.path)) for f in mine.added]
        if keys and present(keys):
            raise conflict(
                ctx.root,
                "AlreadyMerged",
                f"source snapshot {snap['snapshot-id']} adds files the destination already "
                "has: it was merged before",
                snap["snapshot-id"],
                d_id,
            )
        extra = _replaced_partitions(io, snap, mine, step.head)
        new = replay(io, table, snap, mine, step, extra)
        merged["snapshots"] = jsonio.extended(merged["snapshots"], [new])
        log.append((new["snapshot-id"], new["timestamp-ms"]))
    merged["last-sequence-number"] = step.last_sequence
    assert step.head is not None
    _set_main(merged, step.head, log)


def _replaced_partitions(
    io: NamespaceIO, snap: dict[str, Any], mine: Any, head: dict[str, Any] | None
) -> dict[str, Any]:
    """For a dynamic partition overwrite: the head's other files in the partitions it
    replaces, which Iceberg's retry removes too."""
    if (snap.get("summary") or {}).get("replace-partitions") != "true":
        return {}
    scope = {f.partition for f in mine.added if f.is_data}
    own = mine.paths("removed")
    out = {}
    for path, entry, partition in live_at(io, head):
        if partition in scope and path not in own:
            out[path] = entry
    return out


def _set_main(merged: dict[str, Any], head: dict[str, Any], log: list[tuple[int, int]]) -> None:
    refs = dict(merged.get("refs") or {})
    main = dict(refs.get("main") or {"type": "branch"})
    main["snapshot-id"] = head["snapshot-id"]
    refs["main"] = main
    merged["refs"] = refs
    merged["current-snapshot-id"] = head["snapshot-id"]
    merged["snapshot-log"] = jsonio.extended(
        merged.get("snapshot-log"), ({"snapshot-id": s, "timestamp-ms": t} for s, t in log)
    )


def _changes(
    ctx: TableMergeContext,
    io: NamespaceIO,
    merged: dict[str, Any],
    dest: tuple[ObjectEntry, dict[str, Any]],
) -> list[TableChange]:
    """Write the merged metadata; the tree changes over the destination's table."""
    dest_uri = f"{ctx.repo.info.storage_namespace.rstrip('/')}/{dest[0].physical_address}"
    log = [
        *(merged.get("metadata-log") or []),
        {"metadata-file": dest_uri, "timestamp-ms": dest[1].get("last-updated-ms", 0)},
    ]
    keep = int(
        (merged.get("properties") or {}).get(
            "write.metadata.previous-versions-max", MAX_METADATA_LOG
        )
    )
    merged["metadata-log"] = log[-max(keep, 1) :]
    merged["last-updated-ms"] = max(
        int(time.time() * 1000), int(dest[1].get("last-updated-ms", 0)) + 1
    )
    location = io.address(merged["location"])
    # the merged metadata file (the table's whole history) is written while the tree
    # changes are worked out, from pieces: the history arrays' text is not copied
    written = io.write_later(metadata_address(location, dest_uri), jsonio.dumps_chunks(merged))
    pointer = ctx.root + POINTER
    files = transition(
        io, ctx.root, dest[1], merged, present_at(ctx.repo, ctx.dest), _entries(ctx, io)
    )
    out = [TableChange(pointer, entry_of(pointer, written(), JSON_TYPE))]
    out += [TableChange(k, e) for k, e in files.added.items()]
    out += [TableChange(k, None) for k in files.removed]
    return out


def _entries(ctx: TableMergeContext, io: NamespaceIO) -> Any:
    def entry_for(key: str, address: str) -> ObjectEntry:
        written = io.written.get(address)
        if written is not None:
            return entry_of(key, written)
        found = stat_many(ctx.repo, ctx.source, [key])[0]
        if found is not None and found.physical_address == address:
            return replace(found, path=key)
        return make_linked_entry(ctx.repo, key, address)

    return entry_for
