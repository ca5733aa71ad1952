"""The cluster half of suite ``spark``: the same operations on a Spark standalone cluster.

After the ``local[2]`` figures, ``benchmarks.spark`` starts a standalone cluster on this
machine (``tests/spark_cluster/cluster.py``: a master and two one-core workers started from
the pyspark package's scripts with clean environments, so as many cores as ``local[2]``),
points a fresh session at it and times the same operations: the ``graveler`` data source and
``write_native`` / ``read_native`` against plain Spark Parquet, all on the same local disk
(which every worker shares here). Same rounds, interleaved, medians after a warm-up round;
ratios are to plain Spark on the cluster, from this one run. Executors are separate JVMs with
their own Python workers, so the fixed cost per job (task launch, results to the driver) is
larger than in ``local[2]``, for plain Spark as for graveler.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.lake import timed

Operations = Callable[[Any, int, Path, Any], dict[str, Callable[[], None]]]
#: The operations of ``benchmarks.spark.operations`` timed on the cluster too.
CLUSTER_OPS = (
    "graveler_write",
    "plain_write",
    "graveler_read",
    "plain_read",
    "native_write",
    "native_read",
)
CLUSTER_CONF = {
    "spark.ui.enabled": "false",
    "spark.executor.cores": "1",
    "spark.executor.memory": "1g",
    "spark.cores.max": "2",
    "spark.sql.shuffle.partitions": "2",
}


def measure_on_cluster(
    n: int, workdir: Path, rounds: int, make_ops: Operations, pythonpath: list[str]
) -> dict[str, Any]:
    """Seconds (medians) and ratios of :data:`CLUSTER_OPS` (from ``make_ops``, the local
    suite's ``operations``) on a fresh standalone cluster whose Python workers have
    ``pythonpath``. Stops any active session first (one SparkContext per process)."""
    from tests.spark_cluster.cluster import StandaloneCluster

    cluster = StandaloneCluster(workdir / "cluster", sys.executable, workers=2)
    cluster.start()
    try:
        times = _time_on(cluster.url, n, workdir, rounds, make_ops, pythonpath)
    finally:
        cluster.stop()
    med = {name: statistics.median(ts) for name, ts in times.items()}
    return {
        "workers": cluster.workers,
        "seconds": med,
        "write_ratio": med["graveler_write"] / med["plain_write"],
        "read_ratio": med["graveler_read"] / med["plain_read"],
        "native_write_ratio": med["native_write"] / med["plain_write"],
        "native_read_ratio": med["native_read"] / med["plain_read"],
        "all_seconds": times,
    }


def _time_on(
    master: str, n: int, workdir: Path, rounds: int, make_ops: Operations, pythonpath: list[str]
) -> dict[str, list[float]]:
    from graveler_spark import spark_session

    from graveler.client import Graveler

    spark = spark_session(
        master,
        app_name="graveler-bench-cluster",
        config=CLUSTER_CONF,
        pythonpath=pythonpath,
        fresh=True,
        log_level="ERROR",
    )
    try:
        with Graveler(home=workdir / "home") as gv:
            everything = make_ops(spark, n, workdir, gv)
            return _rounds({name: everything[name] for name in CLUSTER_OPS}, rounds)
    finally:
        spark.stop()


def _rounds(ops: dict[str, Any], rounds: int) -> dict[str, list[float]]:
    for fn in ops.values():  # warm-up: executors' Python workers, imports, JIT
        fn()
    times: dict[str, list[float]] = {name: [] for name in ops}
    for _ in range(rounds):
        for name, fn in ops.items():
            times[name].append(timed(fn))
    return times


def print_next_to_local(row: dict[str, Any]) -> None:
    """The cluster's figures beside ``local[2]``'s (``row`` from ``benchmarks.spark``)."""
    local, cluster = row["seconds"], row["cluster"]["seconds"]
    lines = [
        ("data source write", "graveler_write", "plain_write", "write_ratio"),
        ("data source read ", "graveler_read", "plain_read", "read_ratio"),
        ("write_native     ", "native_write", "plain_write", "native_write_ratio"),
        ("read_native      ", "native_read", "plain_read", "native_read_ratio"),
    ]
    print(f"\n  {'':17}  {'local[2]':>28}  {'standalone cluster, 2 x 1 core':>32}")
    for label, ours, plain, ratio in lines:
        here = f"{local[ours]:.2f} s vs {local[plain]:.2f} s = {row[ratio]:.2f}x"
        there = f"{cluster[ours]:.2f} s vs {cluster[plain]:.2f} s = {row['cluster'][ratio]:.2f}x"
        print(f"  {label}  {here:>28}  {there:>32}")
    print("  (graveler vs plain Spark Parquet on the same disk, medians of the same rounds)")
