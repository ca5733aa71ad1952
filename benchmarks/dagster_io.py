"""Suite ``dagster-io``: what the graveler IO manager costs a Dagster run.

Materializes a chain of ``ASSETS`` pandas assets (``rows`` rows each; ``--sizes`` sets the rows)
with Dagster's own ``FilesystemIOManager`` and with ``GravelerIOManager`` (each output written on
the run branch and committed there), on the same persistent instance in one process, and then
times the run-status sensor's merge into ``main``. Reported as ratios measured in this one run:
``graveler_run / filesystem_run`` (median of ``REPEATS``) and the merge time per run.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

ASSETS = 5
REPEATS = 3


def _assets(rows: int) -> list[Any]:
    """A chain a0 -> a1 -> ... of pandas assets (a0 builds ``rows`` rows, the rest add 1)."""
    import dagster as dg
    import pandas as pd

    @dg.asset(name="a0")
    def first():  # type: ignore[no-untyped-def]
        return pd.DataFrame({"k": range(rows), "v": [float(x) for x in range(rows)]})

    def step(i: int) -> Any:
        @dg.asset(name=f"a{i}", ins={"upstream": dg.AssetIn(f"a{i - 1}")})
        def _asset(upstream):  # type: ignore[no-untyped-def]
            return upstream.assign(v=upstream["v"] + 1)

        return _asset

    return [first, *(step(i) for i in range(1, ASSETS))]


def _timed_runs(assets: list[Any], instance: Any, resources: dict[str, Any]) -> list[Any]:
    import dagster as dg

    out = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        result = dg.materialize(assets, instance=instance, resources=resources)
        out.append((time.perf_counter() - t0, result))
    return out


def _one_size(rows: int, workdir: Path) -> dict[str, Any]:
    import dagster as dg
    from graveler_dagster import GravelerResource, graveler_definitions

    (workdir / "home").mkdir()
    assets = _assets(rows)
    resource = GravelerResource(repository="bench", home=str(workdir / "gv"))
    pieces = graveler_definitions(resource)
    merge_sensor = pieces["sensors"][0]
    with dg.DagsterInstance.local_temp(str(workdir / "home")) as instance:
        fs = {"io_manager": dg.FilesystemIOManager(base_dir=str(workdir / "fs"))}
        fs_runs = _timed_runs(assets, instance, fs)
        gv_runs = _timed_runs(assets, instance, pieces["resources"])
        merges = []
        for _, result in gv_runs:
            t0 = time.perf_counter()
            with dg.build_run_status_sensor_context(
                sensor_name=merge_sensor.name,
                dagster_instance=instance,
                dagster_run=result.dagster_run,
                dagster_event=result.get_run_success_event(),
                resources=pieces["resources"],
            ) as ctx:
                merge_sensor(ctx)
            merges.append(time.perf_counter() - t0)
    fs_s = statistics.median(t for t, _ in fs_runs)
    gv_s = statistics.median(t for t, _ in gv_runs)
    return {
        "rows": rows,
        "assets": ASSETS,
        "filesystem_run_seconds": fs_s,
        "graveler_run_seconds": gv_s,
        "graveler_over_filesystem": gv_s / fs_s,
        "merge_seconds": statistics.median(merges),
    }


def run(sizes: list[int]) -> list[dict[str, Any]]:
    results = []
    for rows in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            r = _one_size(rows, Path(tmp))
        print(
            f"dagster-io rows={rows:>9,} assets={ASSETS}: filesystem run "
            f"{r['filesystem_run_seconds']:.2f}s, graveler run {r['graveler_run_seconds']:.2f}s "
            f"(x{r['graveler_over_filesystem']:.2f}), merge {r['merge_seconds'] * 1000:.0f} ms"
        )
        results.append(r)
    return results
