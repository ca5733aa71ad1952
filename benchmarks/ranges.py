"""Suite ``ranges``: how range settings trade commit and diff cost against range count.

Runs the ``committed`` measurements on one tree size for several (min_size, max_size,
raggedness) settings, including lakeFS's shipped defaults (0, 20 MiB, 50,000). The defaults in
``graveler.storage.committed.splitter`` were chosen from this table: in Python, rewriting a range
costs about 5 us per entry, so the average range should hold a few thousand entries, not 50,000.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from benchmarks.committed import measure
from graveler.core.model import RangeSettings
from graveler.storage.committed.splitter import DEFAULT_RANGE_SETTINGS

KIB, MIB = 1024, 1024 * 1024
CANDIDATES = [
    RangeSettings(0, 20 * MIB, 50_000),  # lakeFS's defaults
    RangeSettings(0, 4 * MIB, 8192),
    DEFAULT_RANGE_SETTINGS,
    RangeSettings(32 * KIB, 4 * MIB, 512),
]


def run(sizes: list[int]) -> dict[str, Any]:
    n = max(sizes) if sizes else 200_000
    rows = []
    with tempfile.TemporaryDirectory(prefix="graveler-bench-") as tmp:
        for s in CANDIDATES:
            print(f"[ranges] {n:,} keys with {s} ...", flush=True)
            row = measure(n, Path(tmp), s)
            row["settings"] = f"{s.min_size // KIB}K/{s.max_size // MIB}M/{s.raggedness}"
            rows.append(row)
    print(
        f"\n{'min/max/raggedness':22}{'ranges':>8}{'KiB/range':>11}{'commit-1 ms':>13}"
        f"{'diff-10 ms':>12}{'lookups/s':>12}"
    )
    for r in rows:
        print(
            f"{r['settings']:22}{r['ranges']:>8}{r['avg_range_kib']:>11.0f}"
            f"{r['commit1_seconds'] * 1000:>13.1f}{r['diff10_seconds'] * 1000:>12.1f}"
            f"{r['lookups_single_per_s']:>12,.0f}"
        )
    return {"n": n, "rows": rows}
