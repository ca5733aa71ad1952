"""Suite ``scaling``: cost of commit-1, diff-10 and a warm single lookup against N, for every
size up to the run's scale (log-log plot with ``--plot``)."""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.commit import commit_one
from benchmarks.diffmerge import changed_commit, diff_time
from benchmarks.lake import Context, timed
from benchmarks.lookups import sample_paths
from benchmarks.report import table

#: Commit-1 and diff-10 are medians over this many keys / change sets (one is noisy: the range
#: a random key falls in is picked in proportion to its size).
TRIALS = 11


def point(ctx: Context, n: int) -> dict[str, float]:
    lake = ctx.lake(n)
    with lake.client(ctx.fresh_dir(f"scaling-{n}")) as gv:
        repo = gv.repository("lake")
        repo.create_branch("scale", lake.commit_id)
        commit_s = commit_one(repo, "scale", n, trials=TRIALS, file_stats=False)["seconds"]
        diffs = []
        for version in range(3, 3 + TRIALS):  # a new random set of 10 keys each time
            repo.create_branch(f"scale-diff-{version}", lake.commit_id)
            other = changed_commit(repo, n, f"scale-diff-{version}", 10, version=version)
            diffs.append(diff_time(repo, lake.commit_id, other, min(10, n)))
        diff_s = statistics.median(diffs)
        paths = sample_paths(n, 20_000)
        for p in paths:  # warm the caches
            repo.stat(lake.commit_id, p)
        lookup_s = timed(lambda: [repo.stat(lake.commit_id, p) for p in paths]) / len(paths)
    return {"n": n, "commit_1": commit_s, "diff_10": diff_s, "lookup": lookup_s}


def run(ctx: Context) -> dict[str, Any]:
    points = [point(ctx, n) for n in ctx.ladder]
    table(
        "scaling: cost against repository size",
        ["N", "commit-1 ms", "diff-10 ms", "lookup us"],
        [(p["n"], p["commit_1"] * 1e3, p["diff_10"] * 1e3, p["lookup"] * 1e6) for p in points],
    )
    first, last = points[0], points[-1]
    ratios = {k: last[k] / first[k] for k in ("commit_1", "diff_10", "lookup")}
    if len(points) > 1:
        print(
            f"  cost ratio N={last['n']:,} / N={first['n']:,}: "
            + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items())
            + "  (target <= 3)"
        )
    return {"points": points, "ratios": ratios}
