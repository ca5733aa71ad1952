"""Suite ``spark``: the ``graveler`` data source against plain Spark Parquet, same run.

python -m benchmarks spark [--sizes 1m]

One local Spark session (``local[2]``) writes N rows (``id``, ``k`` bigint, ``v`` double):

* ``df.write.format("graveler")``: overwrite of a branch prefix, staged in one transaction
  (once more with ``commit_message``, which also commits the branch); with the shim this is
  the native write (Spark's Parquet writer, staged on the driver), and ``python_write`` the
  same with ``nativeWrites=false`` (the Python writer);
* ``df.write.parquet(local path)``: plain Spark;

then reads them back fully with ``spark.read.format("graveler")`` and ``spark.read.parquet``,
materialising every column through Spark's ``noop`` sink. The local session has the JVM shim
on its class path: ``graveler_read`` is the Python reader (``nativeReads=false``),
``shim_read`` the default read, planned by the Python source and read by Spark's Parquet scan
(each includes ``load()``, so the Python planning call too). The same rounds time
``graveler_spark.write_native`` / ``read_native`` (Spark's own Parquet writer and reader on
the namespace's physical files, plus linking / resolving). After one warm-up round (JVM, Python
workers, imports) each operation runs ``ROUNDS`` times, interleaved; medians and their ratios
to plain Spark are reported. Target: at most 1.3x plain Spark.

Three floors put the ratios in context, all Python data sources defined here: one that reads
nothing (Spark's fixed cost of any Python data source read: planning in Python workers, task
set-up); one that reads the same N rows from memory as Arrow batches in two partitions, doing
no I/O at all (the fastest any Python data source can hand Spark these rows); and one whose
writer takes the same rows as Arrow batches and discards them (Spark's cost of handing rows to
any Python writer).

Then the main operations run again on a standalone cluster (``benchmarks/spark_cluster.py``)
and both sets of figures are printed side by side.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.lake import timed
from benchmarks.spark_cluster import measure_on_cluster, print_next_to_local

ROUNDS = 7
TARGET_RATIO = 1.3
ROOT = Path(__file__).resolve().parents[1]


def _session(shim: bool = False) -> Any:
    """A local[2] session whose driver and Python workers import this checkout's code (and,
    with ``shim``, the JVM shim on the driver's class path)."""
    sys.path[:0] = [p for p in (str(ROOT / "providers"),) if p not in sys.path]
    from graveler_spark import shim_jar, spark_session

    config = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
    jar = shim_jar() if shim else None
    if jar:
        config["spark.jars"] = jar
    return spark_session(
        "local[2]",
        app_name="graveler-bench",
        config=config,
        pythonpath=[str(ROOT), str(ROOT / "providers")],
        log_level="ERROR",
    )


def _floor_source() -> type:
    """A Python data source that reads nothing and writes nowhere (defined here, shipped by
    value): what Spark itself costs any Python data source."""
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )

    class EmptyReader(DataSourceReader):
        def read(self, partition: object) -> Any:
            return iter(())

    class MemoryReader(DataSourceReader):
        """``rows`` rows of (id, k, v) built in memory, as Arrow batches of 131,072 rows."""

        def __init__(self, rows: int) -> None:
            self.rows = rows

        def partitions(self) -> list[InputPartition]:
            half = self.rows // 2
            return [InputPartition((0, half)), InputPartition((half, self.rows))]

        def read(self, partition: Any) -> Any:
            import numpy as np
            import pyarrow as pa

            start, stop = partition.value
            for lo in range(start, stop, 131_072):
                ids = np.arange(lo, min(stop, lo + 131_072), dtype=np.int64)
                yield pa.RecordBatch.from_arrays(
                    [pa.array(ids), pa.array(ids % 7), pa.array(ids * 0.5)], ["id", "k", "v"]
                )

    class DiscardingWriter(DataSourceArrowWriter):
        def write(self, iterator: Any) -> WriterCommitMessage:
            for _ in iterator:
                pass
            return WriterCommitMessage()

    class FloorSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "graveler_bench_floor"

        def schema(self) -> str:
            return "id long, k long, v double" if self.options.get("rows") else "id long"

        def reader(self, schema: Any) -> DataSourceReader:
            rows = int(self.options.get("rows", "0"))
            return MemoryReader(rows) if rows else EmptyReader()

        def writer(self, schema: Any, overwrite: bool) -> DiscardingWriter:
            return DiscardingWriter()

    return FloorSource


def operations(spark: Any, n: int, workdir: Path, gv: Any) -> dict[str, Callable[[], None]]:
    """The timed operations over one repository and one plain directory."""
    from graveler_spark import read_native, write_native
    from pyspark.sql import functions as F

    repo = gv.create_repository("bench", (workdir / "ns").as_uri())
    opts = {"home": str(gv.home), "database_url": gv.database_url}
    df = spark.range(n).select("id", (F.col("id") % 7).alias("k"), (F.col("id") * 0.5).alias("v"))
    plain_path = str(workdir / "plain")
    uri = f"graveler://{repo.name}/main/table"
    uri_native = f"graveler://{repo.name}/main/native"
    spark.dataSource.register(_floor_source())

    def gv_write() -> None:  # replace the prefix: one job, one staging transaction
        df.write.format("graveler").options(**opts).mode("overwrite").save(uri)

    def gv_write_commit() -> None:  # the same, then commit the branch
        writer = df.write.format("graveler").options(**opts).option("commit_message", "bench")
        writer.mode("overwrite").save(uri)

    def python_write() -> None:  # the Python writer (with the shim, writes are native)
        writer = df.write.format("graveler").options(**opts).option("nativeWrites", "false")
        writer.mode("overwrite").save(uri)

    def python_write_commit() -> None:
        writer = df.write.format("graveler").options(**opts).option("nativeWrites", "false")
        writer.option("commit_message", "bench").mode("overwrite").save(uri)

    def plain_write() -> None:
        df.write.mode("overwrite").parquet(plain_path)

    def gv_read() -> None:  # the Python reader (forced: with the shim, reads are native)
        read = spark.read.format("graveler").options(**opts).option("nativeReads", "false")
        read.load(uri).write.format("noop").mode("overwrite").save()

    def shim_read() -> None:  # the default with the shim: planned in Python, read by Spark
        read = spark.read.format("graveler").options(**opts).load(uri)
        read.write.format("noop").mode("overwrite").save()

    def plain_read() -> None:
        spark.read.parquet(plain_path).write.format("noop").mode("overwrite").save()

    def read_floor() -> None:
        empty = spark.read.format("graveler_bench_floor").load()
        empty.write.format("noop").mode("overwrite").save()

    def read_rows_floor() -> None:
        rows = spark.read.format("graveler_bench_floor").option("rows", str(n)).load()
        rows.write.format("noop").mode("overwrite").save()

    def write_floor() -> None:
        df.write.format("graveler_bench_floor").mode("append").save()

    def native_write() -> None:
        write_native(df, uri_native, mode="overwrite", commit_message="bench", client=gv)

    def native_read() -> None:
        read = read_native(spark, uri_native, client=gv)
        read.write.format("noop").mode("overwrite").save()

    return {
        "graveler_write": gv_write,
        "graveler_write_commit": gv_write_commit,
        "python_write": python_write,
        "python_write_commit": python_write_commit,
        "plain_write": plain_write,
        "graveler_read": gv_read,
        "shim_read": shim_read,
        "plain_read": plain_read,
        "python_ds_read_floor": read_floor,
        "python_ds_read_rows_floor": read_rows_floor,
        "python_ds_write_floor": write_floor,
        "native_write": native_write,
        "native_read": native_read,
    }


def measure(spark: Any, n: int, workdir: Path, rounds: int = ROUNDS) -> dict[str, Any]:
    from graveler.client import Graveler

    with Graveler(home=workdir / "home") as gv:
        ops = operations(spark, n, workdir, gv)
        for fn in ops.values():  # warm-up: JIT, Python workers, imports
            fn()
        times: dict[str, list[float]] = {name: [] for name in ops}
        for _ in range(rounds):
            for name, fn in ops.items():
                times[name].append(timed(fn))
    med = {name: statistics.median(ts) for name, ts in times.items()}
    return {
        "n": n,
        "rounds": rounds,
        "seconds": med,
        "read_vs_rows_floor": med["graveler_read"] / med["python_ds_read_rows_floor"],
        "write_ratio": med["graveler_write"] / med["plain_write"],
        "write_commit_ratio": med["graveler_write_commit"] / med["plain_write"],
        "python_write_ratio": med["python_write"] / med["plain_write"],
        "python_write_commit_ratio": med["python_write_commit"] / med["plain_write"],
        "read_ratio": med["graveler_read"] / med["plain_read"],
        "native_write_ratio": med["native_write"] / med["plain_write"],
        "native_read_ratio": med["native_read"] / med["plain_read"],
        "shim_read_ratio": med["shim_read"] / med["plain_read"],
        "shim_read_vs_rows_floor": med["shim_read"] / med["python_ds_read_rows_floor"],
        "write_floor_ratio": med["python_ds_write_floor"] / med["plain_write"],
        "read_rows_floor_ratio": med["python_ds_read_rows_floor"] / med["plain_read"],
        "all_seconds": times,
    }


def run(sizes: list[int]) -> dict[str, Any]:
    """Every size of at least 100k (the largest alone when all are smaller), one session;
    sizes above 1M run 3 rounds instead of ``ROUNDS``."""
    chosen = [n for n in sorted(sizes) if n >= 100_000] or [max(sizes or [1_000_000])]
    spark = _session(shim=True)  # graveler_read forces the Python reader; shim_read is native
    rows = {}
    try:
        for n in chosen:
            print(f"[spark] writing and reading {n:,} rows, graveler vs plain Parquet ...")
            with tempfile.TemporaryDirectory(prefix="graveler-bench-") as tmp:
                rows[n] = measure(spark, n, Path(tmp), ROUNDS if n <= 1_000_000 else 3)
            _print(rows[n])
    finally:
        spark.stop()
    n = chosen[-1]
    row = rows[n]
    print("[spark] the same on a standalone cluster (benchmarks/spark_cluster.py) ...", flush=True)
    with tempfile.TemporaryDirectory(prefix="graveler-bench-cluster-") as tmp:
        paths = [str(ROOT), str(ROOT / "providers")]
        rounds = ROUNDS if n <= 1_000_000 else 3
        row["cluster"] = measure_on_cluster(n, Path(tmp), rounds, operations, paths)
    print_next_to_local(row)
    return row if len(chosen) == 1 else {"sizes": rows}


def _print(row: dict[str, Any]) -> None:
    s = row["seconds"]
    lines = [
        ("data source write (shim: native)", "graveler_write", "plain_write", "write_ratio"),
        ("  + commit_message", "graveler_write_commit", "plain_write", "write_commit_ratio"),
        ("the same, Python writer", "python_write", "plain_write", "python_write_ratio"),
        ("  + commit_message", "python_write_commit", "plain_write", "python_write_commit_ratio"),
        ("data source read ", "graveler_read", "plain_read", "read_ratio"),
        ("the same, native (shim)", "shim_read", "plain_read", "shim_read_ratio"),
        ("write_native + commit", "native_write", "plain_write", "native_write_ratio"),
        ("read_native      ", "native_read", "plain_read", "native_read_ratio"),
    ]
    print()
    for label, ours, plain, ratio in lines:
        print(
            f"  {label}: {s[ours]:.2f} s vs plain {s[plain]:.2f} s -> {row[ratio]:.2f}x "
            f"(target <= {TARGET_RATIO})"
        )
    print(
        f"  Spark's own cost for any Python data source: reading nothing "
        f"{s['python_ds_read_floor']:.2f} s; reading these rows from memory (no I/O) "
        f"{s['python_ds_read_rows_floor']:.2f} s ({row['read_rows_floor_ratio']:.2f}x plain "
        f"read); taking these rows and discarding them {s['python_ds_write_floor']:.2f} s "
        f"({row['write_floor_ratio']:.2f}x plain write)"
    )
    print(
        f"  data source read vs the ready-made-batches floor: {row['read_vs_rows_floor']:.2f}x "
        f"(target <= 1.15); native through the shim: {row['shim_read_vs_rows_floor']:.2f}x"
    )
    print(f"  medians of {row['rounds']} interleaved rounds after a warm-up round")


def read_ab(sizes: list[int]) -> dict[str, Any]:
    """Suite ``spark-read``: the data source read with and without its one-batch-ahead decoding
    thread (option ``prefetch``) against the ready-made-batches floor, interleaved, 5 rounds,
    one session per run. Target: the read within 1.15x of the floor."""
    from pyspark.sql import functions as F

    from graveler.client import Graveler

    spark = _session()
    rows: dict[int, Any] = {}
    try:
        spark.dataSource.register(_floor_source())
        for n in sorted(sizes):
            with tempfile.TemporaryDirectory(prefix="graveler-bench-") as tmp:
                gv = Graveler(home=Path(tmp) / "home")
                repo = gv.create_repository("bench", (Path(tmp) / "ns").as_uri())
                opts = {"home": str(gv.home), "database_url": gv.database_url}
                uri = f"graveler://{repo.name}/main/t"
                df = spark.range(n).select(
                    "id", (F.col("id") % 7).alias("k"), (F.col("id") * 0.5).alias("v")
                )
                df.write.format("graveler").options(**opts).mode("overwrite").save(uri)

                def noop(frame: Any) -> Callable[[], None]:
                    return lambda: frame.write.format("noop").mode("overwrite").save()

                reader = spark.read.format("graveler").options(**opts)
                floor = spark.read.format("graveler_bench_floor").option("rows", str(n))
                ops = {
                    "floor": noop(floor.load()),
                    "prefetch": noop(reader.load(uri)),
                    "inline": noop(reader.option("prefetch", "false").load(uri)),
                }
                for fn in ops.values():
                    fn()
                times: dict[str, list[float]] = {k: [] for k in ops}
                for _ in range(5):
                    for k, fn in ops.items():
                        times[k].append(timed(fn))
                gv.close()
            med = {k: statistics.median(v) for k, v in times.items()}
            rows[n] = {"seconds": med, **{f"{k}_vs_floor": med[k] / med["floor"] for k in med}}
            print(
                f"  {n:,} rows: floor {med['floor']:.2f} s, read {med['prefetch']:.2f} s "
                f"({rows[n]['prefetch_vs_floor']:.2f}x, target <= 1.15), without the decoding "
                f"thread {med['inline']:.2f} s ({rows[n]['inline_vs_floor']:.2f}x)"
            )
    finally:
        spark.stop()
    return rows
