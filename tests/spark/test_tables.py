"""Spark tables on a real local session: partitioned writes and discovery, pushdown, dynamic
overwrite, schema evolution, CSV / JSON writes and overwrites that conflict across branches."""

from __future__ import annotations

import io

import graveler_spark
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from graveler_spark import read_native, write_native
from pyspark.sql import functions as F

from graveler.core.errors import MergeConflict
from tests.spark.conftest import Lake


def _parquet(table: pa.Table, **kwargs: object) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, **kwargs)
    return out.getvalue()


def _read(session, lake: Lake, ref: str, path: str, **options: str):
    return (
        session.read.format("graveler").options(**lake.options, **options).load(lake.uri(ref, path))
    )


def _events(spark, n: int = 12):
    return spark.range(n).select(
        "id",
        F.date_add(F.lit("2024-01-01").cast("date"), (F.col("id") % 3).cast("int")).alias("day"),
        (F.col("id") % 2).cast("int").alias("half"),
    )


def test_partition_by_writes_hive_directories_spark_reads_back(spark, lake: Lake) -> None:
    df = _events(spark)
    df.write.format("graveler").options(**lake.options).partitionBy("day").mode("append").save(
        lake.uri("main", "t")
    )
    df.write.format("graveler").options(**lake.options).option("partitionBy", "day,half").mode(
        "append"
    ).save(lake.uri("main", "u"))
    t_dirs = {e.path.split("/")[1] for e in lake.repo.iter_objects("main", "t/")}
    assert t_dirs == {"day=2024-01-01", "day=2024-01-02", "day=2024-01-03"}
    u_file = next(lake.repo.iter_objects("main", "u/day=2024-01-02/half=1/"))
    stored = pq.read_schema(io.BytesIO(lake.repo.get("main", u_file.path)))
    assert stored.names == ["id"]  # partition values live in the directory names
    back = _read(spark, lake, "main", "u")
    assert back.schema.simpleString() == "struct<id:bigint,day:date,half:int>"
    assert sorted(tuple(r) for r in back.collect()) == sorted(tuple(r) for r in df.collect())
    one = back.filter("day = DATE'2024-01-02' AND half = 1").select("id").collect()
    assert sorted(r.id for r in one) == [1, 7]
    # Spark's own Parquet source reads the same layout the same way
    native = read_native(spark, lake.uri("main", "u"), client=lake.gv)
    assert native.schema.simpleString() == back.schema.simpleString()
    assert sorted(tuple(r) for r in native.collect()) == sorted(tuple(r) for r in df.collect())


def test_discovery_types_nulls_and_base_path(spark, lake: Lake) -> None:
    def put(path: str, ids: list[int]) -> None:
        lake.repo.put("main", path, _parquet(pa.table({"id": pa.array(ids, pa.int64())})))

    put("t/n=1/s=a%2Fb/p.parquet", [1])
    put("t/n=2.5/s=x/p.parquet", [2])
    put("t/n=__HIVE_DEFAULT_PARTITION__/s=x/p.parquet", [3])
    put("t/n=1/s=x/_SUCCESS", [])
    lake.repo.commit("main", "layout")
    df = _read(spark, lake, "main", "t")
    assert df.schema.simpleString() == "struct<id:bigint,n:double,s:string>"
    assert sorted(tuple(r) for r in df.collect()) == [
        (1, 1.0, "a/b"),
        (2, 2.5, "x"),
        (3, None, "x"),
    ]
    sub = _read(spark, lake, "main", "t/n=2.5")
    assert sub.columns == ["id", "s"]
    based = _read(spark, lake, "main", "t/n=2.5", basePath=lake.uri("main", "t"))
    assert [tuple(r) for r in based.collect()] == [(2, 2.5, "x")]
    assert based.columns == ["id", "n", "s"]
    native = read_native(
        spark, lake.uri("main", "t/n=2.5"), options={"basePath": "t"}, client=lake.gv
    )
    assert [tuple(r) for r in native.select("id", "n", "s").collect()] == [(2, 2.5, "x")]
    put("t/loose.parquet", [4])
    with pytest.raises(Exception, match="conflicting partition directories"):
        _read(spark, lake, "main", "t").collect()
    with pytest.raises(Exception, match="is not a parent"):
        _read(spark, lake, "main", "t/n=1", basePath="elsewhere").collect()


def _corrupt_row_group(lake: Lake, path: str, group: int) -> None:
    """Overwrite the data pages of one row group: reading it fails, skipping it does not."""
    entry = lake.repo.stat("main", path)
    local = lake.repo.store.local_path(entry.physical_address)
    column = pq.ParquetFile(local).metadata.row_group(group).column(0)
    start = column.dictionary_page_offset if column.has_dictionary_page else None
    with open(local, "r+b") as fh:
        fh.seek(start or column.data_page_offset)  # the chunk: dictionary page, then data
        fh.write(b"\xff" * column.total_compressed_size)


def test_pushdown_prunes_partitions_and_skips_row_groups(spark, lake: Lake) -> None:
    ids = pa.table({"id": pa.array(range(2000), pa.int64())})
    lake.repo.put("main", "p/k=1/a.parquet", _parquet(ids, row_group_size=1000))
    lake.repo.put("main", "p/k=2/broken.parquet", b"not parquet at all, never opened")
    _corrupt_row_group(lake, "p/k=1/a.parquet", 0)  # ids 0..999
    query = "k = 1 AND id >= 1500"
    # the Python reader (the shim's native reads are Spark's scan, which always prunes)
    python = {"nativeReads": "false"}
    # Spark's defaults: no pushdown, and reads still work (the plain reader has no pushFilters)
    with pytest.raises(Exception):  # noqa: B017 (the broken file is opened without pushdown)
        _read(spark, lake, "main", "p", **python).filter(query).count()
    session = spark.newSession()
    graveler_spark.activate(session)  # Spark resolves the format in the active session
    try:
        graveler_spark.register(session, home=str(lake.gv.home), database_url=lake.gv.database_url)
        assert session.conf.get(graveler_spark.PUSHDOWN_SETTING) == "true"
        reader = session.read.format("graveler").options(**python)
        pushed = reader.load(lake.uri("main", "p")).filter(query)
        assert pushed.count() == 500
        assert pushed.agg(F.min("id")).first()[0] == 1500
        with pytest.raises(Exception):  # noqa: B017 (row group 0 holds ids below 1500)
            reader.load(lake.uri("main", "p")).filter("k = 1").count()
    finally:
        graveler_spark.activate(spark)
    # native reads: Spark's own scan prunes k=2 and skips row group 0, with Spark's defaults
    native = _read(spark, lake, "main", "p").filter(query)
    assert native.count() == 500 and native.agg(F.min("id")).first()[0] == 1500


def test_register_picks_the_reader_spark_allows(lake: Lake) -> None:
    from graveler_spark.datasource import GravelerDataSource
    from graveler_spark.reader import GravelerReader, PushdownReader
    from pyspark.sql.types import LongType, StructField, StructType

    lake.repo.put("main", "r/a.parquet", _parquet(pa.table({"id": [1]})))
    schema = StructType([StructField("id", LongType())])
    options = {**lake.options, "path": lake.uri("main", "r")}
    plain = GravelerDataSource(dict(options)).reader(schema)
    assert type(plain) is GravelerReader  # no pushFilters: Spark's default setting reads it
    bound = type("Bound", (GravelerDataSource,), {"pushdown": True})
    assert isinstance(bound(dict(options)).reader(schema), PushdownReader)
    shim_on = {**options, "__pushdown": "true"}  # what the JVM shim passes when it is on
    assert isinstance(GravelerDataSource(shim_on).reader(schema), PushdownReader)
    shim_off = {**options, "__pushdown": "false"}
    assert type(GravelerDataSource(shim_off).reader(schema)) is GravelerReader


def test_dynamic_partition_overwrite(spark, lake: Lake) -> None:
    df = _events(spark)
    writer = df.write.format("graveler").options(**lake.options).partitionBy("day")
    writer.mode("append").save(lake.uri("main", "t"))
    fix = spark.range(100, 102).select("id", F.lit("2024-01-02").cast("date").alias("day"))
    fix.write.format("graveler").options(**lake.options).partitionBy("day").option(
        "partitionOverwriteMode", "dynamic"
    ).mode("overwrite").save(lake.uri("main", "t"))
    counts = _read(spark, lake, "main", "t").groupBy("day").count().collect()
    per_day = {str(r["day"]): r["count"] for r in counts}
    assert per_day == {"2024-01-01": 4, "2024-01-02": 2, "2024-01-03": 4}
    # the session setting, seen through the JVM shim
    session = spark.newSession()
    session.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    again = session.range(200, 201).select("id", F.lit("2024-01-03").cast("date").alias("day"))
    again.write.format("graveler").options(**lake.options).partitionBy("day").mode(
        "overwrite"
    ).save(lake.uri("main", "t"))
    ids = sorted(r.id for r in _read(spark, lake, "main", "t").collect())
    assert ids == [0, 3, 6, 9, 100, 101, 200]
    # write_native: the same option
    write_native(df, lake.uri("main", "n"), partition_by=["day"], client=lake.gv)
    write_native(
        fix,
        lake.uri("main", "n"),
        mode="overwrite",
        partition_by=["day"],
        partition_overwrite_mode="dynamic",
        client=lake.gv,
    )
    native = read_native(spark, lake.uri("main", "n"), client=lake.gv)
    assert native.filter("day = DATE'2024-01-02'").count() == 2 and native.count() == 10


def test_schema_evolution_as_sparks_parquet_source(spark, lake: Lake) -> None:
    put = lake.repo.put
    put("main", "e/1.parquet", _parquet(pa.table({"id": pa.array([1], pa.int32())})))
    required = pa.schema(
        [pa.field("id", pa.int32(), nullable=False), pa.field("extra", pa.int64(), nullable=False)]
    )
    put("main", "e/2.parquet", _parquet(pa.table({"id": [2], "extra": [5]}, schema=required)))
    merged = _read(spark, lake, "main", "e", mergeSchema="true")
    assert [(f.name, f.nullable) for f in merged.schema.fields] == [("id", True), ("extra", True)]
    assert sorted(tuple(r) for r in merged.collect()) == [(1, None), (2, 5)]
    put("main", "d/1.parquet", _parquet(pa.table({"x": pa.array([1], pa.decimal128(5, 1))})))
    put("main", "d/2.parquet", _parquet(pa.table({"x": pa.array([2], pa.decimal128(9, 1))})))
    widened = _read(spark, lake, "main", "d", mergeSchema="true")
    assert widened.schema.simpleString() == "struct<x:decimal(9,1)>"
    put("main", "c/1.parquet", _parquet(pa.table({"x": pa.array([1], pa.int32())})))
    put("main", "c/2.parquet", _parquet(pa.table({"x": pa.array([2], pa.int64())})))
    with pytest.raises(Exception, match=r"cannot merge column 'x': int32 .* and int64"):
        _read(spark, lake, "main", "c", mergeSchema="true").collect()
    # without mergeSchema: the first file's int reads the second file's long? Spark refuses
    # to narrow, and so do we; a smaller type in a later file is widened. The Python reader
    # names the object; Spark's scan (native reads, with the shim) names the physical file.
    with pytest.raises(Exception, match=r"column 'x' is int64 in 'c/2\.parquet'"):
        _read(spark, lake, "main", "c", nativeReads="false").collect()
    with pytest.raises(Exception, match=r"PARQUET_COLUMN_DATA_TYPE_MISMATCH.*column \[x\]"):
        _read(spark, lake, "main", "c").collect()
    put("main", "w/1.parquet", _parquet(pa.table({"x": pa.array([1], pa.int64())})))
    put("main", "w/2.parquet", _parquet(pa.table({"x": pa.array([2], pa.int32())})))
    assert sorted(r.x for r in _read(spark, lake, "main", "w").collect()) == [1, 2]


def test_csv_and_json_writes_through_the_data_source(spark, lake: Lake) -> None:
    df = _events(spark, 6)
    for fmt in ("csv", "json"):
        df.write.format("graveler").options(**lake.options).option("format", fmt).partitionBy(
            "half"
        ).mode("overwrite").save(lake.uri("main", fmt))
        files = [e for e in lake.repo.iter_objects("main", f"{fmt}/") if "part-" in e.path]
        assert files and all(e.path.endswith(f".{fmt}") for e in files)
        back = _read(spark, lake, "main", fmt, format=fmt)
        rows = sorted((r.id, str(r.day)[:10], r.half) for r in back.collect())  # CSV: timestamp
        assert rows == sorted((r.id, str(r.day), r.half) for r in df.collect())
    assert lake.repo.stat("main", files[0].path).content_type == "application/x-ndjson"


def _overwrite(spark, lake: Lake, branch: str, first: int, n: int, **options: str) -> None:
    df = spark.range(first, first + n).select("id", (F.col("id") % 2).cast("int").alias("k"))
    writer = df.write.format("graveler").options(**lake.options, **options).partitionBy("k")
    writer.option("commit_message", f"overwrite on {branch}").mode("overwrite").save(
        lake.uri(branch, "t")
    )


def test_overwrites_on_two_branches_conflict_appends_merge(spark, lake: Lake) -> None:
    _overwrite(spark, lake, "main", 0, 10)
    for name in ("left", "right"):
        lake.repo.create_branch(name, "main")
    _overwrite(spark, lake, "left", 100, 10)
    _overwrite(spark, lake, "right", 200, 10)
    lake.repo.merge("left", "main")
    with pytest.raises(MergeConflict, match=r"_graveler_table\.json"):
        lake.repo.merge("right", "main")
    lake.repo.merge("right", "main", strategy="source-wins")
    ids = sorted(r.id for r in _read(spark, lake, "main", "t").collect())
    assert ids == list(range(200, 210))  # right wholly; left's files are not part of the table
    # appends on two branches merge cleanly, and both land
    for name, first in (("a1", 300), ("a2", 400)):
        lake.repo.create_branch(name, "main")
        rows = spark.range(first, first + 3).select("id", F.lit(1).alias("k"))
        rows.write.format("graveler").options(**lake.options).partitionBy("k").option(
            "commit_message", "append"
        ).mode("append").save(lake.uri(name, "t"))
    lake.repo.merge("a1", "main")
    lake.repo.merge("a2", "main")
    assert _read(spark, lake, "main", "t").count() == 16
    # dynamic overwrites: different partitions merge, the same partition conflicts
    for name in ("d0", "d1", "d1b"):
        lake.repo.create_branch(name, "main")
    for name, k in (("d0", 0), ("d1", 1), ("d1b", 1)):
        fix = spark.range(k, k + 1).select("id", F.lit(k).alias("k"))
        fix.write.format("graveler").options(**lake.options).partitionBy("k").option(
            "partitionOverwriteMode", "dynamic"
        ).option("commit_message", "fix").mode("overwrite").save(lake.uri(name, "t"))
    lake.repo.merge("d0", "main")
    lake.repo.merge("d1", "main")
    with pytest.raises(MergeConflict, match=r"k=1/_graveler_partition\.json"):
        lake.repo.merge("d1b", "main")
    assert sorted(r.id for r in _read(spark, lake, "main", "t").collect()) == [0, 1]


def test_delta_table_keeps_its_log_and_reads_at_a_commit(lake: Lake, tmp_path) -> None:
    import deltalake  # the dev extra installs it
    from graveler_spark import native_write
    from graveler_spark.native import local_view

    def write(rows: list[int], mode: str):
        def run(directory: str) -> None:
            local_view(lake.repo, "main", "delta/t", directory)  # the log so far
            deltalake.write_deltalake(directory, pa.table({"id": rows}), mode=mode)

        return run

    native_write(
        lake.uri("main", "delta/t"), write([1, 2], "append"), commit_message="v0", client=lake.gv
    )
    v0 = lake.repo.create_tag("v0", "main")
    native_write(
        lake.uri("main", "delta/t"), write([3], "append"), commit_message="v1", client=lake.gv
    )
    paths = [e.path for e in lake.repo.iter_objects("main", "delta/t/_delta_log/")]
    assert paths == [f"delta/t/_delta_log/{i:020d}.json" for i in (0, 1)]

    def table_at(ref: str) -> object:
        view = tmp_path / ref
        local_view(lake.repo, ref, "delta/t", str(view))
        return deltalake.DeltaTable(str(view))

    old, new = table_at(v0.commit_id), table_at("main")
    assert old.version() == 0 and sorted(old.to_pyarrow_table()["id"].to_pylist()) == [1, 2]
    assert new.version() == 1 and sorted(new.to_pyarrow_table()["id"].to_pylist()) == [1, 2, 3]
