"""Suite ``diff``: diff of 10 and of 10,000 changes; merge of a run branch with 10,000 changes
into a main of N that also moved (a real three-way merge, not a fast-forward)."""

from __future__ import annotations

import random
from typing import Any

from benchmarks.lake import Context, Lake, lake_entry, lake_path, median_time, timed
from benchmarks.report import table
from graveler.repository import Repository


def changed_commit(repo: Repository, n: int, branch: str, changes: int, version: int) -> str:
    """Commit on ``branch`` a new version of ``changes`` random existing keys."""
    rng = random.Random(version)
    idx = sorted(rng.sample(range(n), min(changes, n)))
    entries = [lake_entry(lake_path(i), version=version) for i in idx]
    return repo.import_entries(branch, entries, f"{changes} changes").id


def diff_time(repo: Repository, base: str, other: str, expected: int) -> float:
    def consume() -> None:
        assert sum(1 for _ in repo.diff(base, other)) == expected

    return median_time(consume, repeat=3)


def run(ctx: Context) -> dict[str, Any]:
    lake: Lake = ctx.lake(ctx.n)
    out: dict[str, Any] = {"n": ctx.n}
    with lake.client(ctx.fresh_dir("diff")) as gv:
        repo = gv.repository("lake")
        for changes in (10, 10_000):
            name = f"diff-{changes}"
            repo.create_branch(name, lake.commit_id)
            other = changed_commit(repo, ctx.n, name, changes, version=changes)
            expect = min(changes, ctx.n)
            out[f"diff_{changes}_seconds"] = diff_time(repo, lake.commit_id, other, expect)
        unrelated = lake_entry(lake_path(0, hour_offset=10**5, tag="main-only"))
        repo.import_entries("main", [unrelated], "main moves on")
        # A pipeline run writes new partitions: 10,000 files under the next hours' prefixes.
        repo.create_branch("run", lake.commit_id)
        hours = ctx.n // 500 + 1
        run_files = [lake_entry(lake_path(i, hour_offset=hours, tag="run")) for i in range(10_000)]
        repo.import_entries("run", run_files, "run output")
        out["merge_10000_seconds"] = timed(lambda: repo.merge("run", "main"))
        assert len(repo.resolve("main").commit.parents) == 2
        # Worst case: 10,000 changes spread uniformly over every range of the tree.
        repo.create_branch("scattered", repo.resolve("main").commit.id)
        changed_commit(repo, ctx.n, "scattered", 10_000, version=7)
        repo.import_entries("main", [lake_entry(lake_path(1, 10**5, "main-2"))], "again")
        out["merge_scattered_seconds"] = timed(lambda: repo.merge("scattered", "main"))
    rows = [
        ("diff, 10 changes", out["diff_10_seconds"] * 1000),
        ("diff, 10,000 changes", out["diff_10000_seconds"] * 1000),
        ("merge a run branch of 10,000 new files", out["merge_10000_seconds"] * 1000),
        ("merge 10,000 changes scattered over all ranges", out["merge_scattered_seconds"] * 1000),
    ]
    table(f"diff and merge against a main of {ctx.n:,} objects", ["operation", "ms"], rows)
    return out
