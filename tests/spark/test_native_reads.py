"""Native reads through the JVM shim: the Python source plans on the driver, Spark's own Parquet
scan reads the pinned files. Every read here is compared with the Python reader
(``nativeReads=false``) on the same session; ``_native`` tells which path a DataFrame took."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from tests.spark.conftest import Lake


def _parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def _read(spark, lake: Lake, ref: str, path: str, **options: str):
    reader = spark.read.format("graveler").options(**lake.options, **options)
    return reader.load(lake.uri(ref, path))


def _plan(df) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def _native(df) -> bool:
    """Whether Spark's Parquet scan over the planned files serves ``df``."""
    return "PlannedFileIndex" in _plan(df)


def _rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _same_as_python(spark, lake: Lake, ref: str, path: str, **options: str):
    """The native read of ``path``, checked against the Python reader's."""
    native = _read(spark, lake, ref, path, **options)
    python = _read(spark, lake, ref, path, nativeReads="false", **options)
    assert _native(native) and not _native(python)
    assert native.schema == python.schema
    assert _rows(native) == _rows(python)
    return native


def test_partition_values_are_typed_and_escaped_as_the_python_reader_does(
    spark, lake: Lake
) -> None:
    repo = lake.repo
    layout = {
        "t/k=1/d=2024-01-02/s=a%2Fb/f.parquet": [1, 2],
        "t/k=3000000000/d=2024-01-03/s=__HIVE_DEFAULT_PARTITION__/f.parquet": [3],
        "t/k=2/d=2024-01-03/s=x%3Dy z/f.parquet": [4],
        "u/ts=2024-01-01 10%3A00%3A00/f.parquet": [5],
        "u/ts=2024-01-02 00%3A00%3A00.5/f.parquet": [6],
        "v/x=1e400/f.parquet": [7],  # a double partition value that is infinite
        "v/x=-2.5/f.parquet": [8],
    }
    for key, ids in layout.items():
        repo.put("main", key, _parquet(pa.table({"id": pa.array(ids, pa.int64())})))
    repo.put("main", "t/_SUCCESS", b"")
    repo.put("main", "t/.hidden.crc", b"junk")
    repo.commit("main", "layout")
    t = _same_as_python(spark, lake, "main", "t")
    assert t.schema.simpleString() == "struct<id:bigint,k:bigint,d:date,s:string>"
    assert {r.s for r in t.collect()} == {"a/b", None, "x=y z"}
    u = _same_as_python(spark, lake, "main", "u")
    assert u.schema.simpleString() == "struct<id:bigint,ts:timestamp>"
    v = _same_as_python(spark, lake, "main", "v")
    assert sorted(r.x for r in v.collect()) == [-2.5, float("inf")]
    base = lake.uri("main", "t")
    one = _same_as_python(spark, lake, "main", "t/k=1", basePath=base)
    assert [(r.id, r.k, r.s) for r in one.orderBy("id").collect()] == [(1, 1, "a/b"), (2, 1, "a/b")]


def test_spark_prunes_partitions_pushes_filters_and_reads_only_needed_columns(
    spark, lake: Lake
) -> None:
    df = spark.range(40).select(
        "id", (F.col("id") % 4).cast("int").alias("day"), (F.col("id") * 0.5).alias("v")
    )
    df.write.format("graveler").options(**lake.options).partitionBy("day").mode("overwrite").save(
        lake.uri("main", "events")
    )
    native = _read(spark, lake, "main", "events").filter("day = 2 AND id > 10").select("id")
    plan = _plan(native)
    assert "ParquetScan" in plan and "PlannedFileIndex" in plan
    assert "PartitionFilters: [isnotnull(day" in plan and "(day#" in plan
    assert "PushedFilters: [IsNotNull(id), GreaterThan(id,10)]" in plan
    assert "ReadSchema: struct<id:bigint>" in plan
    assert sorted(r.id for r in native.collect()) == [i for i in range(11, 40) if i % 4 == 2]
    python = _read(spark, lake, "main", "events", nativeReads="false")
    assert sorted(r.id for r in python.filter("day = 2 AND id > 10").collect()) == sorted(
        r.id for r in native.collect()
    )


def test_merge_schema_and_its_conflicts(spark, lake: Lake) -> None:
    repo = lake.repo
    repo.put("main", "m/1.parquet", _parquet(pa.table({"id": [1], "a": ["x"]})))
    repo.put("main", "m/2.parquet", _parquet(pa.table({"id": [2], "b": [2.5]})))
    repo.put("main", "bad/1.parquet", _parquet(pa.table({"id": [1]})))
    repo.put("main", "bad/2.parquet", _parquet(pa.table({"id": ["two"]})))
    merged = _same_as_python(spark, lake, "main", "m", mergeSchema="true")
    assert merged.columns == ["id", "a", "b"]
    assert _rows(merged) == [(1, "x", None), (2, None, 2.5)]
    with pytest.raises(Exception, match="cannot merge column 'id'"):
        _read(spark, lake, "main", "bad", mergeSchema="true")


def test_overwritten_tables_and_partitions_read_only_live_files(spark, lake: Lake) -> None:
    uri = lake.uri("main", "t")
    first = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id long, day string")
    writer = first.write.format("graveler").options(**lake.options).partitionBy("day")
    writer.mode("overwrite").save(uri)
    again = spark.createDataFrame([(10, "a"), (20, "b")], "id long, day string")
    again.write.format("graveler").options(**lake.options).partitionBy("day").mode(
        "overwrite"
    ).save(uri)
    assert _rows(_same_as_python(spark, lake, "main", "t")) == [(10, "a"), (20, "b")]
    fix = spark.createDataFrame([(21, "b")], "id long, day string")
    fix.write.format("graveler").options(**lake.options).partitionBy("day").option(
        "partitionOverwriteMode", "dynamic"
    ).mode("overwrite").save(uri)
    assert _rows(_same_as_python(spark, lake, "main", "t")) == [(10, "a"), (21, "b")]


def test_reads_by_branch_tag_and_commit_see_their_pinned_files(spark, lake: Lake) -> None:
    repo = lake.repo
    repo.put("main", "t/1.parquet", _parquet(pa.table({"id": [1, 2]})))
    first = repo.commit("main", "one").id
    repo.create_tag("v1", "main")
    by_branch = _read(spark, lake, "main", "t")  # defined now, run after the next commit
    assert by_branch.count() == 2
    repo.put("main", "t/2.parquet", _parquet(pa.table({"id": [3]})))
    repo.commit("main", "two")
    assert by_branch.count() == 2 and _native(by_branch)  # pinned when it was defined
    assert _same_as_python(spark, lake, "main", "t").count() == 3
    assert _rows(_same_as_python(spark, lake, "main", "t/2.parquet")) == [(3,)]  # one object
    for ref in ("v1", first, "main~1"):
        assert sorted(r.id for r in _same_as_python(spark, lake, ref, "t").collect()) == [1, 2]
    repo.put("main", "t/3.parquet", _parquet(pa.table({"id": [4]})))  # staged, not committed
    assert _same_as_python(spark, lake, "main", "t").count() == 4


def test_a_missing_path_fails_as_with_the_python_reader(spark, lake: Lake) -> None:
    lake.repo.put("main", "t/1.parquet", _parquet(pa.table({"id": [1]})))
    with pytest.raises(Exception, match="no objects at"):
        _read(spark, lake, "main", "nothing/here")


def test_csv_a_user_schema_and_the_option_keep_the_python_reader(spark, lake: Lake) -> None:
    repo = lake.repo
    repo.put("main", "csv/a.csv", b"id,name\n1,ann\n")
    repo.put("main", "p/1.parquet", _parquet(pa.table({"id": pa.array([1, 2], pa.int64())})))
    csv = _read(spark, lake, "main", "csv", format="csv")
    assert not _native(csv) and _rows(csv) == [(1, "ann")]
    forced = _read(spark, lake, "main", "p", nativeReads="false")
    assert not _native(forced) and _rows(forced) == [(1,), (2,)]
    narrowed = spark.read.format("graveler").options(**lake.options).schema("id int")
    typed = narrowed.load(lake.uri("main", "p"))  # the Python reader converts as asked
    assert not _native(typed) and _rows(typed) == [(1,), (2,)]
    assert _native(_read(spark, lake, "main", "p"))
    with pytest.raises(Exception, match="option 'nativeReads' must be true or false"):
        _read(spark, lake, "main", "p", nativeReads="sometimes")


def test_nanosecond_timestamps_keep_the_python_reader(spark, lake: Lake) -> None:
    """pyarrow reads INT96 (Spark's default timestamp encoding) and TIMESTAMP(NANOS) as
    ``timestamp[ns]`` (see ``graveler_spark.plan.spark_readable``)."""
    from graveler_spark import write_native

    stamps = spark.sql("SELECT 1L AS id, TIMESTAMP'2024-01-01 10:00:00' AS t")
    write_native(stamps, lake.uri("main", "int96"), client=lake.gv)
    nanos = pa.table({"t": pa.array([1_700_000_000_000_000_000], pa.timestamp("ns"))})
    lake.repo.put("main", "nanos/1.parquet", _parquet(nanos))
    for path in ("int96", "nanos"):
        df = _read(spark, lake, "main", path)
        assert not _native(df) and df.count() == 1
