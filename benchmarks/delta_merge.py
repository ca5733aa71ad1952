"""Suite ``delta-merge``: a logical merge of a Delta table costs the versions replayed, not
the table (issue 27, point 8).

For each size N (versions of the table on main: 1,000 and 100,000 by default), main holds a
Delta table with one appended file per version, partitioned by day (30 days), a checkpoint
every 100 versions (``_last_checkpoint`` naming the newest) and the data files. Then, from
that commit, a run branch appends 10 versions to the latest day's partition while the
destination appends 1 there too, and the run is merged: both sides changed the table, so it
merges as a table (each of the 10 commits checked against the destination's, then replayed
after it). Beside it, today's file-level merge of the same 10 versions into a destination
that changed something else (the table changed on one side only). Each figure is the median
of 5 merges after one warm-up.

Both merges also rewrite the tree's ranges the new files fall in (about 2,000 entries each):
one for the log, one for the partition. Files spread over many partitions touch as many
ranges, in both merges alike.

The log is written the way Delta writers write it; what no merge reads is stored once and
shared: commit files more than two checkpoint intervals old and every checkpoint but the
newest point at one placeholder object, data files at another (the tree still holds an entry
for each). The merged table is then loaded by delta-rs (its log, from the newest checkpoint).
"""

from __future__ import annotations

import hashlib
import io
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.lake import timed
from benchmarks.report import table
from graveler.client import Graveler
from graveler.repository import Repository
from graveler.storage.entry import ObjectEntry
from graveler.storage.objects import new_physical_address

ROOT = "delta/events/"
LOG = ROOT + "_delta_log/"
INTERVAL = 100
REPLAYED = 10
REPEAT = 5
DAYS = 30
SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "day", "type": "string", "nullable": True, "metadata": {}},
    ],
}


def _add(version: int, tag: str = "") -> dict[str, Any]:
    """Version ``version``'s file: day ``version % 30`` for the table, the last day for the
    appends (``tag`` set)."""
    day = f"2026-01-{(DAYS - 1 if tag else version % DAYS) + 1:02d}"
    return {
        "path": f"day={day}/part-{tag}{version:08d}.parquet",
        "partitionValues": {"day": day},
        "size": 1000,
        "modificationTime": 1_790_000_000_000 + version,
        "dataChange": True,
        "stats": json.dumps({"numRecords": 10, "minValues": {"id": version}}),
    }


def commit_bytes(version: int, tag: str = "") -> bytes:
    """Version ``version`` as a Spark-style blind append (version 0 creates the table)."""
    info = {
        "timestamp": 1_790_000_000_000 + version,
        "operation": "WRITE",
        "operationParameters": {"mode": "Append" if version else "ErrorIfExists"},
        "readVersion": version - 1,
        "isolationLevel": "Serializable",
        "isBlindAppend": True,
    }
    lines: list[dict[str, Any]] = [{"commitInfo": info}]
    if version == 0:
        lines.append({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
        lines.append({"metaData": _metadata()})
    lines.append({"add": _add(version, tag)})
    return "".join(json.dumps(a) + "\n" for a in lines).encode()


def _metadata() -> dict[str, Any]:
    return {
        "id": "00000000-0000-0000-0000-000000000001",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": json.dumps(SCHEMA),
        "partitionColumns": ["day"],
        "configuration": {},
        "createdTime": 1_790_000_000_000,
    }


def checkpoint_bytes(version: int) -> bytes:
    """The classic checkpoint of versions 0..``version``: protocol, metaData, every add."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    adds = [_add(v) for v in range(version + 1)]
    rows: list[dict[str, Any]] = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                **_metadata(),
                "configuration": [],
                "format": {"provider": "parquet", "options": []},
            }
        },
        *({"add": {**a, "partitionValues": list(a["partitionValues"].items())}} for a in adds),
    ]
    schema = pa.schema(
        [
            (
                "protocol",
                pa.struct([("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32())]),
            ),
            ("metaData", _metadata_type()),
            ("add", _add_type()),
        ]
    )
    columns = {name: [r.get(name) for r in rows] for name in schema.names}
    out = io.BytesIO()
    pq.write_table(pa.table(columns, schema=schema), out)
    return out.getvalue()


def _metadata_type() -> Any:
    import pyarrow as pa

    return pa.struct(
        [
            ("id", pa.string()),
            (
                "format",
                pa.struct(
                    [("provider", pa.string()), ("options", pa.map_(pa.string(), pa.string()))]
                ),
            ),
            ("schemaString", pa.string()),
            ("partitionColumns", pa.list_(pa.string())),
            ("configuration", pa.map_(pa.string(), pa.string())),
            ("createdTime", pa.int64()),
        ]
    )


def _add_type() -> Any:
    import pyarrow as pa

    return pa.struct(
        [
            ("path", pa.string()),
            ("partitionValues", pa.map_(pa.string(), pa.string())),
            ("size", pa.int64()),
            ("modificationTime", pa.int64()),
            ("dataChange", pa.bool_()),
            ("stats", pa.string()),
        ]
    )


class Writer:
    """Stores objects and builds the entries an import commits."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self.when = datetime.now(UTC)
        self.shared: dict[str, ObjectEntry] = {}

    def entry(self, path: str, data: bytes) -> ObjectEntry:
        address = new_physical_address()
        self.repo.store.put(address, data)
        return ObjectEntry(path, address, len(data), hashlib.sha256(data).hexdigest(), self.when)

    def placeholder(self, path: str, kind: str) -> ObjectEntry:
        if kind not in self.shared:
            self.shared[kind] = self.entry(f"placeholder/{kind}", kind.encode())
        e = self.shared[kind]
        return ObjectEntry(path, e.physical_address, e.size, e.checksum, self.when)


def build_table(repo: Repository, versions: int) -> str:
    """Commit a table of ``versions`` versions on main; its commit ID."""
    w = Writer(repo)
    newest = (versions - 1) - (versions - 1) % INTERVAL
    entries = []
    for v in range(versions):
        name = f"{LOG}{v:020d}.json"
        recent = v > newest - 2 * INTERVAL
        entries.append(w.entry(name, commit_bytes(v)) if recent else w.placeholder(name, "log"))
        entries.append(w.placeholder(ROOT + str(_add(v)["path"]), "data"))
        if v and v % INTERVAL == 0 and v != newest:
            entries.append(w.placeholder(f"{LOG}{v:020d}.checkpoint.parquet", "checkpoint"))
    entries.append(w.entry(f"{LOG}{newest:020d}.checkpoint.parquet", checkpoint_bytes(newest)))
    hint = json.dumps({"version": newest, "size": newest + 3}).encode()
    entries.append(w.entry(f"{LOG}_last_checkpoint", hint))
    entries.sort(key=lambda e: e.path)
    return repo.import_entries("main", entries, f"a Delta table of {versions:,} versions").id


def append_versions(repo: Repository, branch: str, first: int, count: int, tag: str) -> None:
    w = Writer(repo)
    entries = []
    for v in range(first, first + count):
        entries.append(w.entry(f"{LOG}{v:020d}.json", commit_bytes(v, tag)))
        entries.append(w.placeholder(ROOT + str(_add(v, tag)["path"]), "data"))
    entries.sort(key=lambda e: e.path)
    repo.import_entries(branch, entries, f"{count} appends")


def measure(repo: Repository, base: str, versions: int, i: int) -> tuple[float, float]:
    """(logical merge, file-level merge) of 10 appended versions, one repetition."""
    source, dest, other = f"run-{i}", f"dest-{i}", f"elsewhere-{i}"
    for name in (source, dest, other):
        repo.create_branch(name, base)
    append_versions(repo, source, versions, REPLAYED, f"s{i}-")
    append_versions(repo, dest, versions, 1, f"d{i}-")
    repo.put(other, "elsewhere/file", b"x")
    repo.commit(other, "not the table")
    logical = timed(lambda: repo.merge(source, dest))
    files = timed(lambda: repo.merge(source, other))
    return logical, files


def check_merged(repo: Repository, branch: str, versions: int) -> None:
    """delta-rs loads the merged log (from the newest checkpoint) at the expected version."""
    from deltalake import DeltaTable
    from graveler_spark.native import local_view

    with tempfile.TemporaryDirectory() as where:
        local_view(repo, branch, ROOT, where)
        loaded = DeltaTable(where).version()
    assert loaded == versions + REPLAYED, (loaded, versions + REPLAYED)


def run(sizes: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    rows = []
    for versions in sizes:
        with (
            tempfile.TemporaryDirectory(prefix="graveler-delta-bench-") as tmp,
            Graveler(home=Path(tmp) / "home") as gv,
        ):
            repo = gv.create_repository("lake", (Path(tmp) / "ns").as_uri())
            started = time.perf_counter()
            base = build_table(repo, versions)
            setup = time.perf_counter() - started
            times = [measure(repo, base, versions, i) for i in range(REPEAT + 1)][1:]
            check_merged(repo, "dest-0", versions)
        logical = statistics.median(t[0] for t in times)
        files = statistics.median(t[1] for t in times)
        out[str(versions)] = {"logical_seconds": logical, "file_level_seconds": files}
        rows.append((f"{versions:,}", logical * 1000, files * 1000, setup))
    table(
        f"merge {REPLAYED} appended versions into a Delta table (median of {REPEAT})",
        ["table versions", "logical merge ms", "file-level merge ms", "setup s"],
        rows,
    )
    if len(sizes) > 1:
        ratio = out[str(sizes[-1])]["logical_seconds"] / out[str(sizes[0])]["logical_seconds"]
        out["ratio"] = ratio
        print(f"  logical merge, {sizes[-1]:,} vs {sizes[0]:,} versions: {ratio:.2f}x")
    return out
