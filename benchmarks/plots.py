"""PNG plots of a harness run (only what the run measured)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks import report


def draw(suites: dict[str, Any], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []
    if "scaling" in suites and len(suites["scaling"]["points"]) > 1:
        pts = suites["scaling"]["points"]
        path = directory / "scaling.png"
        report.loglog(
            path,
            "graveler: cost against repository size",
            [p["n"] for p in pts],
            {
                "commit 1 key": [p["commit_1"] for p in pts],
                "diff 10 keys": [p["diff_10"] for p in pts],
                "warm lookup": [p["lookup"] for p in pts],
            },
            "seconds",
        )
        made.append(path)
    if "reuse" in suites:
        path = directory / "reuse.png"
        report.lines(
            path,
            f"range files reused per commit (lake of {suites['reuse']['n']:,})",
            {"reused share": suites["reuse"]["reuse"]},
            "commit",
            "share reused",
        )
        made.append(path)
    if "lookups" in suites:
        r = suites["lookups"]
        path = directory / "lookups.png"
        tiers = ["cold", "warm_disk", "warm_ram"]
        report.bars(
            path,
            f"random stat per second ({r['n']:,} objects)",
            ["cold", "warm disk", "warm RAM"],
            {
                "single": [r[f"single_{t}"] for t in tiers],
                "batched": [r[f"batched_{t}"] for t in tiers],
            },
            "lookups per second",
        )
        made.append(path)
    if "git" in suites:
        g = suites["git"]
        ops = ["commit_1", "diff_10", "log_20"]
        path = directory / "git.png"
        report.bars(
            path,
            f"graveler vs git plumbing ({g['n']:,} paths)",
            ["commit 1", "diff 10", "log 20"],
            {"graveler": [g["graveler"][o] for o in ops], "git": [g["git"][o] for o in ops]},
            "seconds",
        )
        made.append(path)
    return made
