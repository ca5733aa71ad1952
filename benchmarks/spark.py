"""Suite ``spark``: the ``graveler`` data source against plain Spark Parquet, same run.

python -m benchmarks spark [--sizes 1m]

One local Spark session (``local[2]``) writes N rows (``id``, ``k`` bigint, ``v`` double) with
``df.write.format("graveler")`` (append into a branch prefix, staged in one transaction and
committed) and with ``df.write.parquet(local path)``, then reads them back fully with each
(``spark.read.format("graveler")`` vs ``spark.read.parquet``), materialising every column
through Spark's ``noop`` sink. After one warm-up round (JVM and Python workers), each
operation runs ``ROUNDS`` times, interleaved; the medians and their ratios are reported.
Target: the data source takes at most 1.3x plain Spark for both write and read.

For scale, ``python_ds_floor`` times a Python data source that reads nothing at all: the fixed
cost Spark itself adds to any Python data source read (planning in Python workers, task
set-up), which the read ratio at 1,000,000 rows includes.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROUNDS = 5
TARGET_RATIO = 1.3
ROOT = Path(__file__).resolve().parents[1]


def _session() -> Any:
    """A local[2] session whose Python workers import this checkout's code."""
    paths = [str(ROOT), str(ROOT / "providers"), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("graveler-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _empty_source() -> type:
    """A Python data source with one empty partition (defined here, shipped by value)."""
    from pyspark.sql.datasource import DataSource, DataSourceReader

    class EmptyReader(DataSourceReader):
        def read(self, partition: object) -> Any:
            return iter(())

    class EmptySource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "graveler_bench_empty"

        def schema(self) -> str:
            return "id long"

        def reader(self, schema: Any) -> DataSourceReader:
            return EmptyReader()

    return EmptySource


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def operations(spark: Any, n: int, workdir: Path, gv: Any) -> dict[str, Callable[[], None]]:
    """The timed operations over one repository and one plain directory."""
    from pyspark.sql import functions as F

    repo = gv.create_repository("bench", (workdir / "ns").as_uri())
    opts = {"home": str(gv.home), "database_url": gv.database_url}
    df = spark.range(n).select("id", (F.col("id") % 7).alias("k"), (F.col("id") * 0.5).alias("v"))
    plain_path = str(workdir / "plain")
    uri = f"graveler://{repo.name}/main/table"
    spark.dataSource.register(_empty_source())

    def gv_write() -> None:  # replace the prefix, stage and commit: one job, one commit
        writer = df.write.format("graveler").options(**opts).option("commit_message", "bench")
        writer.mode("overwrite").save(uri)

    def plain_write() -> None:
        df.write.mode("overwrite").parquet(plain_path)

    def gv_read() -> None:
        read = spark.read.format("graveler").options(**opts).load(uri)
        read.write.format("noop").mode("overwrite").save()

    def plain_read() -> None:
        spark.read.parquet(plain_path).write.format("noop").mode("overwrite").save()

    def floor() -> None:
        empty = spark.read.format("graveler_bench_empty").load()
        empty.write.format("noop").mode("overwrite").save()

    return {
        "graveler_write": gv_write,
        "plain_write": plain_write,
        "graveler_read": gv_read,
        "plain_read": plain_read,
        "python_ds_floor": floor,
    }


def measure(spark: Any, n: int, workdir: Path) -> dict[str, Any]:
    from graveler.client import Graveler

    with Graveler(home=workdir / "home") as gv:
        ops = operations(spark, n, workdir, gv)
        for fn in ops.values():  # warm-up: JIT, Python workers, imports
            fn()
        times: dict[str, list[float]] = {name: [] for name in ops}
        for _ in range(ROUNDS):
            for name, fn in ops.items():
                times[name].append(_timed(fn))
    med = {name: statistics.median(ts) for name, ts in times.items()}
    return {
        "n": n,
        "rounds": ROUNDS,
        "seconds": med,
        "write_ratio": med["graveler_write"] / med["plain_write"],
        "read_ratio": med["graveler_read"] / med["plain_read"],
        "all_seconds": times,
    }


def run(sizes: list[int]) -> dict[str, Any]:
    n = max(sizes) if sizes else 1_000_000
    print(
        f"[spark] writing and reading {n:,} rows, graveler data source vs plain Parquet ...",
        flush=True,
    )
    spark = _session()
    try:
        with tempfile.TemporaryDirectory(prefix="graveler-bench-") as tmp:
            row = measure(spark, n, Path(tmp))
    finally:
        spark.stop()
    s = row["seconds"]
    print(
        f"\n  write: graveler {s['graveler_write']:.2f} s, plain {s['plain_write']:.2f} s "
        f"-> {row['write_ratio']:.2f}x (target <= {TARGET_RATIO})"
    )
    print(
        f"  read:  graveler {s['graveler_read']:.2f} s, plain {s['plain_read']:.2f} s "
        f"-> {row['read_ratio']:.2f}x (target <= {TARGET_RATIO})"
    )
    print(
        f"  a Python data source reading nothing takes {s['python_ds_floor']:.2f} s (Spark's"
        " fixed cost, included in the read)"
    )
    print(f"  medians of {ROUNDS} interleaved rounds after a warm-up round")
    return row
