"""Suite ``spark-tables``: partition pruning and filter pushdown of the ``graveler`` data source.

python -m benchmarks spark-tables [--sizes 1m]

One local Spark session (``local[2]``, the JVM shim on the class path, ``register()`` called so
pushdown is on) writes N rows (``id`` bigint, ``day`` int in 0..29, ``v`` double) with
``.partitionBy("day")`` through the data source, and the same rows with Spark's own Parquet
writer (partitioned by ``day``, and unpartitioned). Then, interleaved, each ``ROUNDS`` times,
every read materialised through Spark's ``noop`` sink:

* ``full``: the whole table through the data source;
* ``one_partition``: ``day = 7`` (one of 30 partitions) through the data source;
* ``no_partition``: ``day = 99`` (prunes every file): what any query of a Python data source
  costs before it reads a byte, the floor under ``one_partition``;
* ``row_groups``: ``id < N/100`` on the same rows written unpartitioned through the data source
  (each task's file holds a contiguous id range, so statistics skip all but one row group);
* ``plain_full`` / ``plain_one_partition``: the same through ``spark.read.parquet``
  (the unpartitioned copy for the full scan), and ``plain_parts_full``: the partitioned copy
  in full (the same 30-directory layout as the data source's table).

Every data source read runs twice: natively (the default with the shim: planned by the Python
source, read by Spark's Parquet scan) and through the Python reader (``nativeReads=false``,
rows prefixed ``py_``). Each DataFrame is defined once, so the timed actions exclude
``load()`` (where the native plan is made, in one Python call).

Bytes: for the native reads, the sizes of the file splits Spark's scan plans (after partition
pruning); for the Python reader, what its planned partitions open, computed by the reader
itself on the driver for the same filter.
Targets: ``one_partition`` reads at most 0.1x the bytes and takes at most 0.25x the time of
``full``; where pushdown applies, the data source beats ``plain_full``.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.lake import timed
from benchmarks.spark import _session

ROUNDS = 5
DAYS = 30


def planned_bytes(options: dict[str, str], filters: list[Any]) -> int:
    """Bytes of the files the data source opens for ``filters`` (planned on the driver)."""
    from graveler_spark.datasource import GravelerDataSource

    source = type("Bench", (GravelerDataSource,), {"pushdown": True})(dict(options))
    reader = source.reader(source.schema())
    list(reader.pushFilters(filters))
    return sum(f.size for p in reader.partitions() for f, _ in p.pieces)


def operations(spark: Any, n: int, workdir: Path, gv: Any) -> tuple[dict[str, Any], dict]:
    """Write the tables once; return the timed reads and the options of the graveler table."""
    from pyspark.sql import functions as F

    repo = gv.create_repository("bench", (workdir / "ns").as_uri())
    opts = {"home": str(gv.home), "database_url": gv.database_url}
    uri = f"graveler://{repo.name}/main/events"
    df = spark.range(n).select(
        "id", (F.col("id") % DAYS).cast("int").alias("day"), (F.col("id") * 0.5).alias("v")
    )
    df.write.format("graveler").options(**opts).partitionBy("day").mode("overwrite").save(uri)
    flat_uri = f"graveler://{repo.name}/main/flat"
    df.write.format("graveler").options(**opts).mode("overwrite").save(flat_uri)
    plain_parts, plain = str(workdir / "plain-parts"), str(workdir / "plain")
    df.write.mode("overwrite").partitionBy("day").parquet(plain_parts)
    df.write.mode("overwrite").parquet(plain)

    def noop(frame: Any) -> Callable[[], None]:
        return lambda: frame.write.format("noop").mode("overwrite").save()

    def ours(target: str = uri, native: bool = True) -> Any:
        reader = spark.read.format("graveler").options(**opts)
        return reader.option("nativeReads", str(native).lower()).load(target)

    frames = {
        "full": ours(),
        "one_partition": ours().filter("day = 7"),
        "no_partition": ours().filter("day = 99"),
        "row_groups": ours(flat_uri).filter(f"id < {n // 100}"),
        "py_full": ours(native=False),
        "py_one_partition": ours(native=False).filter("day = 7"),
        "py_no_partition": ours(native=False).filter("day = 99"),
        "py_row_groups": ours(flat_uri, native=False).filter(f"id < {n // 100}"),
        "plain_full": spark.read.parquet(plain),
        "plain_parts_full": spark.read.parquet(plain_parts),
        "plain_one_partition": spark.read.parquet(plain_parts).filter("day = 7"),
    }
    scanned = {name: scan_bytes(frames[name]) for name in ("full", "one_partition", "row_groups")}
    ops = {name: noop(frame) for name, frame in frames.items()}
    return ops, {**opts, "path": uri, "native_bytes": scanned}


def scan_bytes(frame: Any) -> int:
    """Bytes of the file splits Spark's own scan of ``frame`` plans (after partition pruning;
    row groups are skipped later, inside the reader)."""
    plan = frame._jdf.queryExecution().executedPlan()
    leaves = plan.collectLeaves()
    total = 0
    for i in range(leaves.size()):
        leaf = leaves.apply(i)
        if leaf.getClass().getSimpleName() != "BatchScanExec":
            continue
        parts = leaf.inputPartitions()
        for j in range(parts.size()):
            total += sum(f.length() for f in parts.apply(j).files())
    return total


def measure(spark: Any, n: int, workdir: Path) -> dict[str, Any]:
    from pyspark.sql.datasource import EqualTo, LessThan

    from graveler.client import Graveler

    with Graveler(home=workdir / "home") as gv:
        ops, options = operations(spark, n, workdir, gv)
        native = options.pop("native_bytes")
        full_bytes = planned_bytes(options, [])
        one_bytes = planned_bytes(options, [EqualTo(("day",), 7)])
        flat = {**options, "path": options["path"].replace("/events", "/flat")}
        rg_bytes = planned_bytes(flat, [LessThan(("id",), n // 100)])
        for fn in ops.values():  # warm-up
            fn()
        times: dict[str, list[float]] = {name: [] for name in ops}
        for _ in range(ROUNDS):
            for name, fn in ops.items():
                times[name].append(timed(fn))
    med = {name: statistics.median(ts) for name, ts in times.items()}
    return {
        "n": n,
        "rounds": ROUNDS,
        "seconds": med,
        "bytes": {"full": full_bytes, "one_partition": one_bytes, "row_groups_planned": rg_bytes},
        "native_bytes": native,
        "one_partition_bytes_ratio": native["one_partition"] / native["full"],
        "py_one_partition_bytes_ratio": one_bytes / full_bytes,
        **ratios(med, ""),
        **ratios(med, "py_"),
        "plain_one_partition_time_ratio": med["plain_one_partition"] / med["plain_parts_full"],
        "all_seconds": times,
    }


def ratios(med: dict[str, float], prefix: str) -> dict[str, float]:
    """The target ratios of the native reads (``prefix`` "") or the Python reader's ("py_")."""
    return {
        f"{prefix}one_partition_time_ratio": med[f"{prefix}one_partition"] / med[f"{prefix}full"],
        f"{prefix}no_partition_time_ratio": med[f"{prefix}no_partition"] / med[f"{prefix}full"],
        f"{prefix}one_partition_vs_plain_full": med[f"{prefix}one_partition"] / med["plain_full"],
        f"{prefix}row_groups_vs_plain_full": med[f"{prefix}row_groups"] / med["plain_full"],
        f"{prefix}full_vs_plain_full": med[f"{prefix}full"] / med["plain_full"],
        f"{prefix}full_vs_plain_parts_full": med[f"{prefix}full"] / med["plain_parts_full"],
    }


def run(sizes: list[int]) -> dict[str, Any]:
    """Every size of at least 100k (the largest alone when all are smaller), one session."""
    import graveler_spark

    chosen = [n for n in sorted(sizes) if n >= 100_000] or [max(sizes or [1_000_000])]
    spark = _session(shim=True)
    graveler_spark.register(spark)
    rows = {}
    try:
        for n in chosen:
            print(f"[spark-tables] {n:,} rows in {DAYS} partitions: pruning and pushdown ...")
            with tempfile.TemporaryDirectory(prefix="graveler-bench-") as tmp:
                rows[n] = measure(spark, n, Path(tmp))
            _print(rows[n])
    finally:
        spark.stop()
    return rows[chosen[-1]] if len(chosen) == 1 else {"sizes": rows}


def _print(row: dict[str, Any]) -> None:
    s = row["seconds"]
    for label, p in (("native (shim)", ""), ("Python reader", "py_")):
        print(
            f"  {label}: one partition of {DAYS}: {row[p + 'one_partition_bytes_ratio']:.3f}x "
            f"the bytes (target <= 0.1), {row[p + 'one_partition_time_ratio']:.2f}x the time "
            f"of a full scan (target <= 0.25): {s[p + 'one_partition']:.2f} s vs "
            f"{s[p + 'full']:.2f} s; a query that prunes every file: "
            f"{s[p + 'no_partition']:.2f} s ({row[p + 'no_partition_time_ratio']:.2f}x)\n"
            f"    vs plain Spark full scan ({s['plain_full']:.2f} s): one partition "
            f"{row[p + 'one_partition_vs_plain_full']:.2f}x, row-group skipping "
            f"{row[p + 'row_groups_vs_plain_full']:.2f}x, full scan "
            f"{row[p + 'full_vs_plain_full']:.2f}x ({row[p + 'full_vs_plain_parts_full']:.2f}x "
            f"plain Spark's full scan of the same partitioned layout)"
        )
    print(
        f"  plain Spark, one partition: {s['plain_one_partition']:.2f} s, the partitioned "
        f"table in full: {s['plain_parts_full']:.2f} s "
        f"({row['plain_one_partition_time_ratio']:.2f}x: Spark's own Parquet source); "
        f"medians of {row['rounds']} interleaved rounds after a warm-up round"
    )
