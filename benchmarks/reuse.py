"""Suite ``reuse``: range-file reuse in a lake that ingests hourly.

Starting from a lake of N files, 30 days of ingest with 20 commits a day add new files under
``input/YYYY/MM/DD/hh/`` (10% daily growth, the upper half of the 5-20% daily change the seed
documents measured). For every commit it records the share of the new tree's range files
reused from the previous commit (the seeds expect >= 99%), and in the end the metadata bytes
actually stored against storing a full snapshot of the tree for every commit.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from benchmarks.lake import lake_entry, lake_path
from graveler.storage.committed.apply import Change
from graveler.storage.committed.cache import TieredCache
from graveler.storage.committed.files import TREE_PREFIX
from graveler.storage.committed.manager import CommittedManager
from graveler.storage.objectstore import open_object_store

DAYS, COMMITS_PER_DAY, DAILY_GROWTH = 30, 20, 0.10


def simulate(n: int, workdir: Path) -> dict[str, Any]:
    store = open_object_store((workdir / "ns").as_uri())
    cm = CommittedManager(store, TieredCache(str(workdir / "cache"), ram_bytes=1 << 30))
    tree, _ = cm.write_records(lake_entry(lake_path(i)).to_record() for i in range(n))
    per_commit = max(20, int(n * DAILY_GROWTH / COMMITS_PER_DAY))
    hours0 = n // 500 + 1
    reuse: list[float] = []
    trees: list[str] = []
    for c in range(DAYS * COMMITS_PER_DAY):
        hour = hours0 + (c * 24) // COMMITS_PER_DAY
        changes = [
            Change(e.key, e.to_record())
            for e in (
                lake_entry(lake_path(j, hour_offset=hour, tag=f"c{c:04d}"))
                for j in range(per_commit)
            )
        ]
        tree, summary = cm.apply(tree, changes)
        total = summary.ranges_reused + summary.ranges_written
        reuse.append(summary.ranges_reused / total)
        trees.append(tree)
    sizes = {info.key[len(TREE_PREFIX) :]: info.size for info in store.list(TREE_PREFIX)}
    stored = sum(sizes.values())
    snapshots = sum(sizes[t] + sum(sizes[r.id] for r in cm.ranges(t)) for t in trees)
    return {
        "n": n,
        "commits": len(trees),
        "files_per_commit": per_commit,
        "reuse": reuse,
        "reuse_min": min(reuse),
        "reuse_mean": sum(reuse) / len(reuse),
        "metadata_bytes": stored,
        "snapshot_bytes": snapshots,
        "final_objects": n + per_commit * len(trees),
    }


#: The simulated lake starts at most this large: at 10M files, 10% daily growth would add 30M
#: records over the 30 days, which measures the machine's memory more than range reuse.
MAX_BASE = 1_000_000


def run(ctx: Any) -> dict[str, Any]:
    n = min(ctx.n, MAX_BASE)
    with tempfile.TemporaryDirectory(dir=ctx.workdir) as tmp:
        print(
            f"  [reuse] simulating {DAYS * COMMITS_PER_DAY} hourly commits on {n:,} files",
            flush=True,
        )
        r = simulate(n, Path(tmp))
    from benchmarks.report import table

    table(
        f"reuse: {r['commits']} commits of {r['files_per_commit']:,} new files over a lake of "
        f"{n:,} (ends at {r['final_objects']:,})",
        ["measure", "value"],
        [
            ("range files reused per commit, mean", f"{r['reuse_mean']:.2%}"),
            ("range files reused per commit, worst", f"{r['reuse_min']:.2%}"),
            ("metadata stored (MiB)", r["metadata_bytes"] / 2**20),
            ("full snapshot per commit (MiB)", r["snapshot_bytes"] / 2**20),
            ("saving", f"{r['snapshot_bytes'] / r['metadata_bytes']:.0f}x"),
        ],
    )
    return r
