"""Native writes through the JVM shim: Spark's own Parquet writer into the job's scratch
directory, staged by the driver as the Python writer's files are. Every write here is compared
with the Python writer (``nativeWrites=false``) on the same session; ``_native`` tells which
path a staged file took (Spark's physical names end in ``c000.<codec>.parquet``)."""

from __future__ import annotations

import json
import os
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from graveler_spark import NamespaceNotShared
from graveler_spark.datasource import GravelerDataSource
from graveler_spark.shim_writes import FILES_OPTION, JOB_OPTION, SCHEMA_OPTION, WRITE_OPTION
from pyspark.sql import functions as F

from graveler.core.errors import MergeConflict
from tests.spark.conftest import Lake

GENERATION = "graveler-spark-generation"
PATHS = ("native", "python")


def _writer(df, lake: Lake, how: str, mode: str = "append", **options: str):
    writer = df.write.format("graveler").options(**lake.options, **options).mode(mode)
    return writer.option("nativeWrites", "true" if how == "native" else "false")


def _native(lake: Lake, ref: str, prefix: str) -> bool:
    """Whether every data file under ``prefix`` was written by Spark's own writer."""
    data = [e for e in lake.repo.iter_objects(ref, prefix + "/") if "/_graveler" not in e.path]
    assert data, f"nothing staged under {prefix}"
    spark_made = [re.search(r"[.-]c\d{3}\.[a-z0-9]+\.parquet$", e.physical_address) for e in data]
    assert all(spark_made) or not any(spark_made)
    return all(spark_made)


def _layout(lake: Lake, ref: str, prefix: str) -> list[tuple[str, str, str]]:
    """(path, content type, metadata) of every object under ``prefix``, job IDs blanked."""
    out = []
    for e in lake.repo.iter_objects(ref, prefix + "/"):
        path = re.sub(r"-[0-9a-f]{32}-", "-JOB-", e.path[len(prefix) :])
        meta = {k: ("JOB" if k.startswith("graveler-spark") else v) for k, v in e.metadata.items()}
        out.append((path, e.content_type, json.dumps(meta, sort_keys=True)))
    return sorted(out)


def _rows(spark, lake: Lake, ref: str, path: str) -> list[tuple]:
    df = spark.read.format("graveler").options(**lake.options).load(lake.uri(ref, path))
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _table(spark, n: int = 40):
    return spark.range(0, n, numPartitions=2).select(
        "id",
        F.when(F.col("id") % 4 == 0, None)
        .otherwise(F.concat(F.lit("a/b="), (F.col("id") % 3).cast("string")))
        .alias("s"),
        (F.col("id") * 1.5).alias("x"),
    )


def test_native_and_python_writes_stage_the_same_table(spark, lake: Lake) -> None:
    df = _table(spark)
    meta = json.dumps({"team": "data"})
    for how in PATHS:
        opts = {"object_metadata": meta, "compression": "gzip", "max_records_per_file": "4"}
        _writer(df, lake, how, **opts).partitionBy("s").save(lake.uri("main", how))
        _writer(df.limit(6), lake, how, "overwrite", **opts).option("partitionBy", "s").save(
            lake.uri("main", how)
        )
        _writer(df.filter("id < 3"), lake, how, **opts).partitionBy("s").save(lake.uri("main", how))
        assert _native(lake, "main", how) == (how == "native")
    assert _layout(lake, "main", "native") == _layout(lake, "main", "python")
    assert _rows(spark, lake, "main", "native") == _rows(spark, lake, "main", "python")
    dirs = {p.split("/")[1] for p, _, _ in _layout(lake, "main", "native")}
    escaped = {"s=__HIVE_DEFAULT_PARTITION__", "s=a%2Fb%3D0", "s=a%2Fb%3D1", "s=a%2Fb%3D2"}
    assert dirs == {*escaped, "_graveler_table.json"}
    for e in lake.repo.iter_objects("main", "native/"):
        if e.path.endswith(".parquet"):
            codec = pq.ParquetFile(lake.repo.store.local_path(e.physical_address)).metadata
            assert codec.row_group(0).column(0).compression == "GZIP"
            assert codec.num_rows <= 4


@pytest.mark.parametrize("how", PATHS)
def test_modes_and_dynamic_overwrite(spark, lake: Lake, how: str) -> None:
    days = spark.range(12).select("id", (F.col("id") % 3).alias("day"))
    _writer(days, lake, how).partitionBy("day").save(lake.uri("main", "t"))
    _writer(days.filter("id < 2"), lake, how).partitionBy("day").save(lake.uri("main", "t"))
    fix = spark.range(100, 102).select("id", F.lit(1).cast("long").alias("day"))
    dynamic = {"partitionOverwriteMode": "dynamic"}
    _writer(fix, lake, how, "overwrite", **dynamic).partitionBy("day").save(lake.uri("main", "t"))
    ids = sorted(r[0] for r in _rows(spark, lake, "main", "t"))
    assert ids == [0, 0, 2, 3, 5, 6, 8, 9, 11, 100, 101]
    _writer(fix, lake, how, "overwrite").partitionBy("day").save(lake.uri("main", "t"))
    assert sorted(r[0] for r in _rows(spark, lake, "main", "t")) == [100, 101]
    assert _native(lake, "main", "t") == (how == "native")
    with pytest.raises(Exception, match="ErrorIfExists"):
        _writer(fix, lake, how, "errorifexists").save(lake.uri("main", "t"))
    with pytest.raises(Exception, match="Ignore"):
        _writer(fix, lake, how, "ignore").save(lake.uri("main", "t"))


def test_native_overwrites_on_two_branches_conflict_appends_merge(spark, lake: Lake) -> None:
    def write(branch: str, first: int, mode: str, **options: str) -> None:
        rows = spark.range(first, first + 3).select("id", F.lit(first % 2).alias("k"))
        _writer(rows, lake, "native", mode, commit_message="w", **options).partitionBy("k").save(
            lake.uri(branch, "t")
        )

    write("main", 0, "overwrite")
    for name in ("left", "right"):
        lake.repo.create_branch(name, "main")
    write("left", 100, "overwrite")
    write("right", 200, "overwrite")
    lake.repo.merge("left", "main")
    with pytest.raises(MergeConflict, match=r"_graveler_table\.json"):
        lake.repo.merge("right", "main")
    for name in ("a1", "a2", "d1", "d1b"):
        lake.repo.create_branch(name, "main")
    write("a1", 300, "append")
    write("a2", 400, "append")
    lake.repo.merge("a1", "main")
    lake.repo.merge("a2", "main")
    assert sorted(r[0] for r in _rows(spark, lake, "main", "t")) == [
        *range(100, 103),
        *range(300, 303),
        *range(400, 403),
    ]
    write("d1", 11, "overwrite", partitionOverwriteMode="dynamic")
    write("d1b", 21, "overwrite", partitionOverwriteMode="dynamic")
    lake.repo.merge("d1", "main")
    with pytest.raises(MergeConflict, match=r"k=1/_graveler_partition\.json"):
        lake.repo.merge("d1b", "main")
    assert _native(lake, "main", "t")


def test_native_commit_options(spark, lake: Lake) -> None:
    head = lake.repo.branch("main").commit_id
    _writer(
        spark.range(5), lake, "native", commit_message="load", commit_metadata='{"k": "v"}'
    ).save(lake.uri("main", "c"))
    commit = next(iter(lake.repo.log("main")))
    assert commit.id != head and commit.message == "load" and commit.metadata.get("k") == "v"
    assert list(lake.repo.diff_uncommitted("main")) == []
    assert _native(lake, "main", "c")
    _writer(spark.range(5), lake, "native").save(lake.uri("main", "u"))  # no message: staged
    staged = {d.path.split("/")[0] for d in lake.repo.diff_uncommitted("main")}
    assert staged == {"u"}


def test_bad_targets_fail_before_spark_writes(spark, lake: Lake) -> None:
    lake.repo.create_tag("v0", "main")
    lake.repo.create_branch("guarded", "main")
    lake.repo.protect_branch("guarded")
    df = spark.range(3)
    cases = [
        (
            lambda: _writer(df, lake, "native").save(lake.uri("nobranch", "x")),
            "'nobranch' is not a branch of 'lake'",
        ),
        (lambda: _writer(df, lake, "native").save(lake.uri("v0", "x")), "'v0' is not a branch"),
        (lambda: _writer(df, lake, "native").save(lake.uri("guarded", "x")), "is protected"),
        (
            lambda: _writer(df, lake, "native", "overwrite").save(lake.uri("main")),
            "overwrite needs a path prefix",
        ),
        (
            lambda: _writer(df, lake, "native").partitionBy("nope").save(lake.uri("main", "x")),
            "not a column",
        ),
        (
            lambda: (
                df.write.format("graveler")
                .options(**lake.options, nativeWrites="maybe")
                .save(lake.uri("main", "x"))
            ),
            "must be true or false",
        ),
    ]
    for call, message in cases:
        with pytest.raises(Exception, match=message):
            call()
    assert list(lake.repo.store.list("data/")) == []
    assert list(lake.repo.diff_uncommitted("main")) == []


def test_a_failing_native_write_stages_nothing_and_leaves_no_file(spark, lake: Lake) -> None:
    def explode(batches):
        for batch in batches:
            if batch.num_rows and batch.column(0)[0].as_py() >= 750:
                raise RuntimeError("task failure on purpose")
            yield batch

    head = lake.repo.branch("main")
    df = spark.range(0, 1_000, numPartitions=4).mapInArrow(explode, "id long")
    with pytest.raises(Exception, match="task failure on purpose"):
        _writer(df, lake, "native", commit_message="never").save(lake.uri("main", "out"))
    assert lake.repo.branch("main") == head
    assert list(lake.repo.diff_uncommitted("main")) == []
    assert list(lake.repo.store.list("data/")) == []


def test_finish_refuses_fewer_files_than_spark_counted(lake: Lake) -> None:
    """The driver-side check, without Spark: a finish that sees fewer files than reported
    stages nothing and removes the scratch directory."""
    schema = json.dumps(
        {
            "type": "struct",
            "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}],
        }
    )
    options = {**lake.options, "path": lake.uri("main", "v"), SCHEMA_OPTION: schema}
    source = GravelerDataSource({**options, WRITE_OPTION: "begin"})
    begun = json.loads(source.schema().fields[0].metadata["__graveler_write"])
    directory = begun["directory"][len("file://") :]
    os.makedirs(directory)
    pq.write_table(
        pa.table({"id": [1]}), os.path.join(directory, "part-00000-ab-c000.snappy.parquet")
    )
    finish = {**options, WRITE_OPTION: "finish", JOB_OPTION: begun["job"], FILES_OPTION: "2"}
    with pytest.raises(
        NamespaceNotShared, match=r"Spark wrote 2 data file\(s\) but the driver sees 1"
    ):
        GravelerDataSource(finish).schema()
    assert not os.path.exists(directory)
    assert list(lake.repo.diff_uncommitted("main")) == []


def test_csv_and_nativewrites_false_keep_the_python_writer(spark, lake: Lake) -> None:
    df = spark.range(4)
    _writer(df, lake, "native", format="csv").save(lake.uri("main", "csv"))
    _writer(df, lake, "python").save(lake.uri("main", "py"))
    _writer(df, lake, "native").save(lake.uri("main", "nat"))
    for prefix, native in (("csv", False), ("py", False), ("nat", True)):
        assert _native(lake, "main", prefix) == native


def test_empty_writes_stage_no_file_on_both_paths(spark, lake: Lake) -> None:
    df = spark.range(6).select("id", (F.col("id") % 2).alias("k"))
    empty = df.filter("id < 0")
    for how in PATHS:
        _writer(df, lake, how).save(lake.uri("main", f"{how}/flat"))
        _writer(df, lake, how).partitionBy("k").save(lake.uri("main", f"{how}/parts"))
        _writer(empty, lake, how, "overwrite").save(lake.uri("main", f"{how}/flat"))
        _writer(empty, lake, how, "overwrite").partitionBy("k").save(
            lake.uri("main", f"{how}/parts")
        )
        _writer(empty, lake, how).save(lake.uri("main", f"{how}/new"))
    assert _layout(lake, "main", "native") == _layout(lake, "main", "python")
    assert [p for p, _, _ in _layout(lake, "main", "native")] == [
        "/flat/_graveler_table.json",
        "/parts/_graveler_table.json",
    ]


def test_timestamps_go_native_only_when_spark_writes_them_as_the_python_writer(
    spark, lake: Lake
) -> None:
    rows = spark.range(4).select("id", F.timestamp_seconds(F.col("id") * 3600).alias("at"))
    _writer(rows, lake, "native").save(lake.uri("main", "int96"))  # the session's default
    assert not _native(lake, "main", "int96")
    micros = spark.newSession()
    micros.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    again = micros.range(4).select("id", F.timestamp_seconds(F.col("id") * 3600).alias("at"))
    _writer(again, lake, "native").save(lake.uri("main", "micros"))
    assert _native(lake, "main", "micros")
    for prefix in ("int96", "micros"):
        back = spark.read.format("graveler").options(**lake.options).load(lake.uri("main", prefix))
        assert back.schema.simpleString() == "struct<id:bigint,at:timestamp>"
    assert _rows(spark, lake, "main", "int96") == _rows(spark, lake, "main", "micros")
