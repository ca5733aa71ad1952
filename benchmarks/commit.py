"""Suite ``commit``: commit 1 changed key; 1% of keys changed under one time prefix; the
import case (1,000,000 staged entries, or N at smaller scales). Reports time, entries per
second, tree files written and bytes written."""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.lake import Context, Lake, lake_entry, lake_path, timed, tree_file_stats
from benchmarks.report import table
from graveler.repository import Repository


def commit_one(
    repo: Repository, branch: str, n: int, trials: int = 5, *, file_stats: bool = True
) -> dict[str, float]:
    """Median cost of committing one changed key on ``branch``; with ``file_stats`` also the
    tree files and bytes each commit wrote (two listings of ``_graveler/`` per trial)."""
    times, files, nbytes = [], [], []
    for t in range(trials):
        path = lake_path((n * (t + 1)) // (trials + 1))
        repo.stage_entries(branch, [lake_entry(path, version=t + 1)])
        before = tree_file_stats(repo) if file_stats else (0, 0)
        times.append(timed(lambda: repo.commit(branch, "one change")))
        after = tree_file_stats(repo) if file_stats else (0, 0)
        files.append(after[0] - before[0])
        nbytes.append(after[1] - before[1])
    out = {"seconds": statistics.median(times), "entries": 1}
    if file_stats:
        out.update(files=max(files), bytes=statistics.median(nbytes))
    return out


def commit_staged(
    repo: Repository, branch: str, entries: list[Any], label: str
) -> dict[str, float]:
    """Stage ``entries`` in one call, then commit them; both timed."""
    stage_s = timed(lambda: repo.stage_entries(branch, entries))
    before = tree_file_stats(repo)
    seconds = timed(lambda: repo.commit(branch, label))
    after = tree_file_stats(repo)
    return {
        "seconds": seconds,
        "entries": len(entries),
        "entries_per_s": len(entries) / seconds,
        "stage_seconds": stage_s,
        "files": after[0] - before[0],
        "bytes": after[1] - before[1],
    }


def run(ctx: Context) -> dict[str, Any]:
    lake: Lake = ctx.lake(ctx.n)
    out: dict[str, Any] = {"n": ctx.n}
    with lake.client(ctx.fresh_dir("commit")) as gv:
        repo = gv.repository("lake")
        repo.create_branch("bench-commit", lake.commit_id)
        out["commit_1"] = commit_one(repo, "bench-commit", ctx.n)
        hours = ctx.n // 500 + 1  # a new time prefix after the lake's last hour
        k = max(1, ctx.n // 100)
        clustered = [lake_entry(lake_path(i, hour_offset=hours, tag="late")) for i in range(k)]
        out["clustered_1pct"] = commit_staged(repo, "bench-commit", clustered, "1% clustered")
    n_import = 1_000_000 if ctx.n >= 1_000_000 else ctx.n
    home = ctx.fresh_dir("import")
    with lake.client(home) as gv:
        fresh = gv.create_repository("imports", (home / "ns").as_uri())
        entries = [lake_entry(lake_path(i)) for i in range(n_import)]
        out["import"] = commit_staged(fresh, "main", entries, "import")
    rows = [
        (
            name,
            r["entries"],
            r["seconds"] * 1000,
            r["entries"] / r["seconds"],
            r["files"],
            r["bytes"] / 1024,
        )
        for name, r in (
            ("commit 1 changed key", out["commit_1"]),
            ("commit 1% under one prefix", out["clustered_1pct"]),
            (f"commit {n_import:,} staged (import)", out["import"]),
        )
    ]
    table(
        f"commit on a main of {ctx.n:,} objects",
        ["operation", "entries", "ms", "entries/s", "files written", "KiB written"],
        rows,
    )
    print(f"  staging the import took {out['import']['stage_seconds']:.1f} s")
    return out
