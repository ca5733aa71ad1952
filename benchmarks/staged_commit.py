"""Suite ``staged-commit``: commit 1,000,000 staged entries (the import case).

Runs in a child process so that peak memory (ru_maxrss) belongs to this workload alone.
Entries are staged through the public API in one call (streamed from a generator), then
committed; the commit streams staged entries from SQL in key order into the tree writer.
lakeFS's tracker reports 167 s for a 500k-object commit; the goal is >= 10x faster per entry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.fsspec.bigwrite import peak_rss_mib

LAKEFS_500K_SECONDS = 167.0


def entries(n: int) -> Iterator[Any]:
    from graveler.storage.entry import ObjectEntry

    now = datetime.now(UTC)
    for i in range(n):
        digest = f"{i:064x}"
        yield ObjectEntry(
            path=f"import/day={i // 40_000:03d}/part-{i:07d}.parquet",
            physical_address=f"data/{digest[-2:]}/{digest}",
            size=1000 + i,
            checksum=digest,
            mtime=now,
        )


def child(n: int, database_url: str | None, workdir: str) -> dict[str, Any]:
    from graveler.client import Graveler

    url = database_url or f"sqlite:///{workdir}/refs.db"
    with Graveler(home=workdir, database_url=url) as gv:
        repo = gv.create_repository("bench", Path(workdir, "ns").as_uri())
        t0 = time.perf_counter()
        repo.stage_entries("main", entries(n))
        stage_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        commit = repo.commit("main", f"import {n} objects")
        commit_s = time.perf_counter() - t0
        ranges = len(repo.committed.ranges(commit.metarange_id))
    peak_mib = peak_rss_mib()
    return {
        "n": n,
        "stage_seconds": stage_s,
        "stage_per_s": n / stage_s,
        "commit_seconds": commit_s,
        "commit_per_s": n / commit_s,
        "ranges": ranges,
        "peak_rss_mib": peak_mib,
        "database": url.split(":", 1)[0],
    }


def run(sizes: list[int], database_url: str | None = None) -> dict[str, Any]:
    n = max(sizes) if sizes else 1_000_000
    with tempfile.TemporaryDirectory(prefix="graveler-bench-") as tmp:
        code = (
            "import json,sys; from benchmarks.staged_commit import child; "
            f"print(json.dumps(child({n}, {database_url!r}, {tmp!r})))"
        )
        print(f"[staged-commit] staging and committing {n:,} entries ...", flush=True)
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=os.getcwd(),
        )
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    lakefs_rate = 500_000 / LAKEFS_500K_SECONDS
    row["speedup_vs_lakefs"] = row["commit_per_s"] / lakefs_rate
    print(
        f"\n  staged {n:,} entries in {row['stage_seconds']:.1f} s "
        f"({row['stage_per_s']:,.0f}/s, {row['database']})"
    )
    print(
        f"  committed in {row['commit_seconds']:.1f} s ({row['commit_per_s']:,.0f} entries/s, "
        f"{row['ranges']} ranges); peak RSS {row['peak_rss_mib']:.0f} MiB (limit 1024)"
    )
    print(
        f"  lakeFS reference: 500k objects in {LAKEFS_500K_SECONDS:.0f} s "
        f"({lakefs_rate:,.0f}/s) -> graveler is {row['speedup_vs_lakefs']:.1f}x faster per entry"
    )
    return row
