"""Suite ``committed``: the committed-tree engine on a local-disk store.

For each tree size N it measures, in one run:

* SST write throughput while bulk-building the tree (entries/s) and the tree's shape;
* random point lookups per second on a warm cache, one at a time and batched;
* a commit of 1 changed key: wall time, files written, ranges written;
* a diff between two trees that differ in 10 keys.

It then reports the cost ratios of commit-1 and diff-10 between the largest and smallest N:
the engine's promise is that they follow the size of the change, not of the tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graveler.core.model import RangeSettings
from graveler.storage.committed.apply import Change
from graveler.storage.committed.cache import TieredCache
from graveler.storage.committed.manager import CommittedManager
from graveler.storage.committed.record import ValueRecord
from graveler.storage.committed.splitter import DEFAULT_RANGE_SETTINGS
from graveler.storage.objectstore import open_object_store

LOOKUPS = 200_000
#: Commit-1 and diff-10 are medians over this many random keys / change sets: the range a
#: random key falls in is picked in proportion to its size, so a handful of trials is noisy.
TRIALS = 25


def key_of(i: int) -> bytes:
    """Lake-like keys: hourly partitions of ~1000 files, in sorted order of i."""
    hour, part = divmod(i, 1000)
    day, hour = divmod(hour, 24)
    return (
        f"tables/events/day={day:05d}/hour={hour:02d}/part-{part:04d}-c000.snappy.parquet".encode()
    )


def record_of(i: int, version: int = 0) -> ValueRecord:
    digest = hashlib.sha256(b"%d:%d" % (i, version)).hexdigest()
    value = json.dumps(
        {
            "a": f"data/{digest[:2]}/{digest}",
            "s": 1_000_000 + i,
            "c": digest,
            "m": 1_764_000_000.0 + i,
            "t": "application/octet-stream",
        },
        separators=(",", ":"),
    ).encode()
    return ValueRecord(key_of(i), bytes.fromhex(digest), value)


def records(n: int) -> Iterator[ValueRecord]:
    return (record_of(i) for i in range(n))


def sst_write_rate(workdir: Path, n: int = 200_000) -> float:
    """Raw SstWriter throughput (entries/s) for lake-like entries, outside the tree logic."""
    from graveler.storage.committed.record import encode_value
    from graveler.storage.sstable import SstWriter

    entries = [(r.key, encode_value(r.identity, r.value)) for r in records(n)]
    writer = SstWriter(str(workdir / "raw.sst"))
    t0 = time.perf_counter()
    for k, v in entries:
        writer.add(k, v)
    writer.finish()
    rate = n / (time.perf_counter() - t0)
    (workdir / "raw.sst").unlink()
    return rate


def measure(
    n: int, workdir: Path, settings: RangeSettings = DEFAULT_RANGE_SETTINGS
) -> dict[str, Any]:
    tag = f"{n}-{settings.min_size}-{settings.max_size}-{settings.raggedness}"
    store = open_object_store((workdir / f"ns-{tag}").as_uri())
    ram = int(os.environ.get("GRAVELER_CACHE_RAM_BYTES", 4 << 30))  # 10m needs ~8 GiB
    cache = TieredCache(str(workdir / f"cache-{tag}"), ram_bytes=ram)
    cm = CommittedManager(store, cache, settings)
    out: dict[str, Any] = {"n": n}

    t0 = time.perf_counter()
    base, _summary = cm.write_records(records(n))
    elapsed = time.perf_counter() - t0
    ranges = cm.ranges(base)
    out.update(
        build_seconds=elapsed,
        sst_entries_per_s=n / elapsed,
        ranges=len(ranges),
        avg_range_entries=n / len(ranges),
        avg_range_kib=sum(r.size for r in ranges) / len(ranges) / 1024,
    )

    for _ in cm.iterate(base):  # warm the RAM tier with every range
        pass
    os.sync()  # let the build's writeback finish so it is not billed to the timed commits
    rng = random.Random(n)
    sample = [key_of(rng.randrange(n)) for _ in range(LOOKUPS)]
    get = cm.get
    t0 = time.perf_counter()
    for k in sample:
        get(base, k)
    out["lookups_single_per_s"] = LOOKUPS / (time.perf_counter() - t0)
    cm.get_many(base, [key_of(rng.randrange(n)) for _ in range(LOOKUPS)])  # warm derived index
    t0 = time.perf_counter()
    found = cm.get_many(base, sample)
    out["lookups_batched_per_s"] = LOOKUPS / (time.perf_counter() - t0)
    assert all(r is not None for r in found)

    commit_times, files, written = [], [], []
    for t in range(TRIALS):
        i = rng.randrange(n)
        before = cm.files.files_written
        t0 = time.perf_counter()
        _, s = cm.apply(base, [Change(key_of(i), record_of(i, t + 1))])
        commit_times.append(time.perf_counter() - t0)
        files.append(cm.files.files_written - before)
        written.append(s.ranges_written)
    out.update(
        commit1_seconds=statistics.median(commit_times),
        commit1_files=max(files),
        commit1_ranges_written=max(written),
    )

    diff_times = []
    for t in range(TRIALS):
        idx = sorted(rng.sample(range(n), 10))
        other, _ = cm.apply(base, [Change(key_of(i), record_of(i, 100 + t)) for i in idx])
        t0 = time.perf_counter()
        entries = list(cm.diff(base, other))
        diff_times.append(time.perf_counter() - t0)
        assert len(entries) == 10
    out["diff10_seconds"] = statistics.median(diff_times)
    return out


def run(sizes: list[int]) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="graveler-bench-") as tmp:
        for n in sizes:
            print(f"[committed] building and measuring a tree of {n:,} keys ...", flush=True)
            rows.append(measure(n, Path(tmp)))
        raw_rate = sst_write_rate(Path(tmp))
    print_table(rows)
    print(f"\nraw SstWriter throughput: {raw_rate:,.0f} entries/s")
    result: dict[str, Any] = {"rows": rows, "raw_sst_entries_per_s": raw_rate}
    if len(rows) >= 2:
        small, large = rows[0], rows[-1]
        result["ratios"] = {
            "commit1": large["commit1_seconds"] / small["commit1_seconds"],
            "diff10": large["diff10_seconds"] / small["diff10_seconds"],
        }
        print(
            f"\ncost ratio N={large['n']:,} / N={small['n']:,}: "
            f"commit-1 {result['ratios']['commit1']:.2f}x, "
            f"diff-10 {result['ratios']['diff10']:.2f}x  (target: <= 3)"
        )
    return result


def print_table(rows: list[dict[str, Any]]) -> None:
    fields = [
        ("keys", "n", "{:,}"),
        ("ranges", "ranges", "{:,}"),
        ("avg range KiB", "avg_range_kib", "{:.0f}"),
        ("tree build entries/s", "sst_entries_per_s", "{:,.0f}"),
        ("lookups/s single", "lookups_single_per_s", "{:,.0f}"),
        ("lookups/s batched", "lookups_batched_per_s", "{:,.0f}"),
        ("commit-1 ms", "commit1_seconds", "{:.1f}", 1000),
        ("commit-1 files", "commit1_files", "{}"),
        ("diff-10 ms", "diff10_seconds", "{:.2f}", 1000),
    ]
    print()
    print(f"{'':24}" + "".join(f"{r['n']:>16,}" for r in rows))
    for label, key, fmt, *scale in fields:
        mult = scale[0] if scale else 1
        print(f"{label:24}" + "".join(f"{fmt.format(r[key] * mult):>16}" for r in rows))
