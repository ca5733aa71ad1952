"""An Iceberg table with a long history, written directly (for the ``iceberg`` suite).

Committing 10,000 snapshots one by one through a catalog takes most of an hour, so this
writes the files an append-only history leaves and registers the last metadata file: each
snapshot appends one Parquet file of one row in a manifest of its own, and every 100
snapshots the manifests are merged into one growing manifest, as Iceberg's MergeAppend does
by default (``commit.manifest.min-count-to-merge`` 100). The current snapshot therefore lists
one merged manifest and fewer than 100 others, whatever the history's length; every earlier
snapshot stays readable (its manifest list and the files it names exist).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io.pyarrow import PyArrowFileIO, parquet_file_to_data_file
from pyiceberg.manifest import (
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    read_manifest_list,
    write_manifest,
    write_manifest_list,
)

from graveler.tables.iceberg import GravelerCatalog

MERGE_EVERY = 100
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
#: The same with Iceberg's field IDs, as Iceberg writers write Parquet.
WITH_IDS = pa.schema(
    [
        pa.field("id", pa.int64(), metadata={"PARQUET:field_id": "1"}),
        pa.field("v", pa.string(), metadata={"PARQUET:field_id": "2"}),
    ]
)


def build(catalog: GravelerCatalog, ident: str, snapshots: int) -> str:
    """Create table ``ident`` with ``snapshots`` append snapshots; returns its metadata URI."""
    table = catalog.create_table(ident, SCHEMA)
    meta = table.metadata
    io = PyArrowFileIO()
    base = meta.location.rstrip("/")
    for folder in ("data", "metadata"):
        Path(base.removeprefix("file://"), folder).mkdir(parents=True, exist_ok=True)
    writer = _History(io, meta, base)
    for i in range(snapshots):
        writer.append(i)
    doc = json.loads(meta.model_dump_json())
    doc["snapshots"] = writer.snapshots
    doc["snapshot-log"] = [_logged(s) for s in writer.snapshots]
    head = writer.snapshots[-1]["snapshot-id"]
    doc["current-snapshot-id"] = head
    doc["refs"] = {"main": {"snapshot-id": head, "type": "branch"}}
    doc["last-sequence-number"] = snapshots
    doc["last-updated-ms"] = writer.snapshots[-1]["timestamp-ms"]
    location = f"{base}/metadata/{snapshots:05d}-{uuid.uuid4()}.metadata.json"
    Path(location.removeprefix("file://")).write_text(json.dumps(doc))
    catalog.register_table(ident, location, overwrite=True)
    return location


def _logged(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {"snapshot-id": snapshot["snapshot-id"], "timestamp-ms": snapshot["timestamp-ms"]}


class _History:
    def __init__(self, io: PyArrowFileIO, meta: Any, base: str) -> None:
        self.io = io
        self.meta = meta
        self.base = base
        self.spec = meta.spec()
        self.schema = meta.schema()
        self.merged: ManifestFile | None = None
        self.merged_entries: list[ManifestEntry] = []
        self.recent: list[tuple[ManifestFile, ManifestEntry]] = []
        self.snapshots: list[dict[str, Any]] = []
        self.started = int(time.time() * 1000) - 10_000_000

    def append(self, i: int) -> None:
        sid, seq = 1_000_000 + i, i + 1
        path = f"{self.base}/data/{i:06d}-{uuid.uuid4()}.parquet"
        rows = pa.Table.from_pylist([{"id": i, "v": f"row {i}"}], schema=WITH_IDS)
        pq.write_table(rows, path.removeprefix("file://"))
        data = parquet_file_to_data_file(self.io, self.meta, path)
        entry = ManifestEntry.from_args(
            status=ManifestEntryStatus.ADDED,
            snapshot_id=sid,
            sequence_number=seq,
            file_sequence_number=seq,
            data_file=data,
        )
        manifest = self._manifest(sid, [("add", entry)])
        manifest.sequence_number, manifest.min_sequence_number = seq, seq
        self.recent.append((manifest, entry))
        if len(self.recent) >= MERGE_EVERY:
            self._merge(sid, seq)
        listed = ([self.merged] if self.merged else []) + [m for m, _ in self.recent]
        self._snapshot(sid, seq, listed)

    def _merge(self, sid: int, seq: int) -> None:
        self.merged_entries += [e for _, e in self.recent]
        rows = [("existing", e) for e in self.merged_entries]
        self.merged = self._manifest(sid, rows)
        self.merged.sequence_number = seq
        self.merged.min_sequence_number = 1
        self.recent = []

    def _manifest(self, sid: int, rows: list[tuple[str, ManifestEntry]]) -> ManifestFile:
        out = self.io.new_output(f"{self.base}/metadata/{uuid.uuid4()}-m0.avro")
        writer = write_manifest(2, self.spec, self.schema, out, sid, "deflate")
        with writer:
            for how, entry in rows:
                if how == "add":
                    writer.add_entry(entry)
                else:
                    writer.existing(entry)
        return writer.to_manifest_file()

    def _snapshot(self, sid: int, seq: int, listed: list[ManifestFile]) -> None:
        uri = f"{self.base}/metadata/snap-{sid}-1-{uuid.uuid4()}.avro"
        parent = self.snapshots[-1]["snapshot-id"] if self.snapshots else None
        with write_manifest_list(2, self.io.new_output(uri), sid, parent, seq, "deflate") as w:
            w.add_manifests(listed)
        snap: dict[str, Any] = {
            "snapshot-id": sid,
            "sequence-number": seq,
            "timestamp-ms": self.started + seq,
            "manifest-list": uri,
            "summary": {
                "operation": "append",
                "added-data-files": "1",
                "added-records": "1",
                "total-data-files": str(seq),
                "total-records": str(seq),
            },
            "schema-id": 0,
        }
        if parent is not None:
            snap["parent-snapshot-id"] = parent
        self.snapshots.append(snap)


def extend(catalog: GravelerCatalog, ident: str, count: int) -> None:
    """Append ``count`` snapshots of one row each to table ``ident`` (``REF.NS.TABLE``), as
    fast appends (each a new manifest), written directly and registered as the table's new
    metadata in one commit: what ``count`` pyiceberg appends leave, without the client's
    per-commit cost on a long history."""
    table = catalog.load_table(ident)
    meta = table.metadata
    io = PyArrowFileIO()
    base = meta.location.rstrip("/")
    doc = json.loads(Path(table.metadata_location.removeprefix("file://")).read_text())
    head = next(s for s in doc["snapshots"] if s["snapshot-id"] == doc["current-snapshot-id"])
    writer = _History(io, meta, base)
    writer.snapshots = [head]
    listed = list(read_manifest_list(io.new_input(head["manifest-list"])))
    last = int(doc["last-sequence-number"])
    for n in range(count):
        seq = last + n + 1
        sid = int(uuid.uuid4().int >> 65)
        path = f"{base}/data/x-{uuid.uuid4()}.parquet"
        rows = pa.Table.from_pylist([{"id": seq, "v": f"row {seq}"}], schema=WITH_IDS)
        pq.write_table(rows, path.removeprefix("file://"))
        data = parquet_file_to_data_file(io, meta, path)
        entry = ManifestEntry.from_args(
            status=ManifestEntryStatus.ADDED, snapshot_id=sid, data_file=data
        )
        manifest = writer._manifest(sid, [("add", entry)])
        manifest.sequence_number, manifest.min_sequence_number = seq, seq
        listed = [manifest, *listed]
        writer.started = int(time.time() * 1000) - seq
        writer._snapshot(sid, seq, listed)
    new = writer.snapshots[1:]
    doc["snapshots"] += new
    doc["snapshot-log"] += [
        {"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]} for s in new
    ]
    doc["current-snapshot-id"] = new[-1]["snapshot-id"]
    doc["refs"]["main"]["snapshot-id"] = new[-1]["snapshot-id"]
    doc["last-sequence-number"] = last + count
    doc["last-updated-ms"] = int(time.time() * 1000)
    location = f"{base}/metadata/x-{uuid.uuid4()}.metadata.json"
    Path(location.removeprefix("file://")).write_text(json.dumps(doc))
    catalog.register_table(ident, location, overwrite=True)
