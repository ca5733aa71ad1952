"""Suite ``lookups``: random ``stat`` on a committed ref, single and batched, through three
cache states: cold (empty cache, local-disk store), warm disk (files cached on disk, empty
RAM tier) and warm RAM."""

from __future__ import annotations

import random
from typing import Any

from benchmarks.lake import Context, Lake, lake_path, timed
from benchmarks.report import table


def sample_paths(n: int, count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [lake_path(rng.randrange(n)) for _ in range(count)]


def measure(ctx: Context, lake: Lake, count: int) -> dict[str, float]:
    paths = sample_paths(lake.n, count)
    out: dict[str, float] = {}
    for mode in ("single", "batched"):
        home = ctx.fresh_dir(f"lookups-{mode}")
        with lake.client(home) as gv:  # cold: nothing cached yet
            out[f"{mode}_cold"] = count / _time(gv, lake, paths, mode)
        with lake.client(home) as gv:  # a new process: disk tier full, RAM tier empty
            out[f"{mode}_warm_disk"] = count / _time(gv, lake, paths, mode)
            out[f"{mode}_warm_ram"] = count / _time(gv, lake, paths, mode)
    return out


def _time(gv: Any, lake: Lake, paths: list[str], mode: str) -> float:
    return timed(lambda: _run(gv, lake, paths, mode))


def _run(gv: Any, lake: Lake, paths: list[str], mode: str) -> None:
    repo = gv.repository("lake")
    if mode == "batched":
        found = repo.stat_many(lake.commit_id, paths)
        assert all(e is not None for e in found)
        return
    stat, ref = repo.stat, lake.commit_id
    for p in paths:
        stat(ref, p)


def run(ctx: Context) -> dict[str, Any]:
    count = min(100_000, max(10_000, ctx.n // 10))
    result = measure(ctx, ctx.lake(ctx.n), count)
    rows = [
        (tier, result[f"single_{key}"], result[f"batched_{key}"])
        for tier, key in (("cold", "cold"), ("warm disk", "warm_disk"), ("warm RAM", "warm_ram"))
    ]
    table(
        f"lookups: random stat on a commit of {ctx.n:,} objects ({count:,} paths), per second",
        ["cache", "single", "batched"],
        rows,
    )
    return {"n": ctx.n, "paths": count, **result}
