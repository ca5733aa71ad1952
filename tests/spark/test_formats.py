"""Reading CSV, JSON and split Parquet through the data source; schemas; errors; register()."""

from __future__ import annotations

import io

import graveler_spark
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.spark.conftest import Lake


def _parquet(table: pa.Table, **kwargs: object) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, **kwargs)
    return out.getvalue()


def _reader(spark, lake: Lake):
    return spark.read.format("graveler").options(**lake.options)


def test_csv_and_json_by_option_skipping_markers(spark, lake: Lake) -> None:
    repo = lake.repo
    repo.put("main", "csv/a.csv", b"id,name\n1,ann\n2,bob\n")
    repo.put("main", "csv/b.csv", b"id,name\n3,cy\n")
    repo.put("main", "csv/_SUCCESS", b"")
    repo.put("main", "csv/.a.csv.crc", b"junk")
    repo.put("main", "json/x.json", b'{"id": 1, "tags": ["a"]}\n{"id": 2, "tags": []}\n')
    repo.commit("main", "files")
    csv = _reader(spark, lake).option("format", "csv").load(lake.uri("main", "csv"))
    assert csv.schema.simpleString() == "struct<id:bigint,name:string>"
    assert sorted(tuple(r) for r in csv.collect()) == [(1, "ann"), (2, "bob"), (3, "cy")]
    one = _reader(spark, lake).option("format", "csv").load(lake.uri("main", "csv/b.csv"))
    assert [tuple(r) for r in one.collect()] == [(3, "cy")]
    js = _reader(spark, lake).option("format", "json").load(lake.uri("main", "json"))
    assert sorted((r.id, list(r.tags)) for r in js.collect()) == [(1, ["a"]), (2, [])]


def test_a_large_parquet_object_is_split_by_row_groups(spark, lake: Lake) -> None:
    table = pa.table({"id": pa.array(range(40_000), pa.int64())})
    lake.repo.put("main", "big/part.parquet", _parquet(table, row_group_size=10_000))
    python = _reader(spark, lake).option("nativeReads", "false")  # split_bytes is its option
    df = python.option("split_bytes", "1").load(lake.uri("main", "big"))
    assert df.rdd.getNumPartitions() == 4
    assert df.agg({"id": "sum"}).first()[0] == sum(range(40_000))
    whole = _reader(spark, lake).option("nativeReads", "false").load(lake.uri("main", "big"))
    assert whole.rdd.getNumPartitions() == 1


def test_merge_schema_and_user_schema(spark, lake: Lake) -> None:
    lake.repo.put("main", "m/1.parquet", _parquet(pa.table({"id": [1], "a": ["x"]})))
    lake.repo.put("main", "m/2.parquet", _parquet(pa.table({"id": [2], "b": [2.5]})))
    merged = _reader(spark, lake).option("mergeSchema", "true").load(lake.uri("main", "m"))
    assert merged.columns == ["id", "a", "b"]
    rows = sorted(tuple(r) for r in merged.collect())
    assert rows == [(1, "x", None), (2, None, 2.5)]
    typed = _reader(spark, lake).schema("id int").load(lake.uri("main", "m"))
    assert sorted(r.id for r in typed.collect()) == [1, 2]
    empty = _reader(spark, lake).schema("id long").load(lake.uri("main", "nothing"))
    assert empty.count() == 0
    with pytest.raises(Exception, match="no objects at graveler://lake/main/nothing"):
        _reader(spark, lake).load(lake.uri("main", "nothing"))


def test_bad_targets_fail_before_any_file_is_written(spark, lake: Lake) -> None:
    lake.repo.create_tag("v0", "main")
    lake.repo.create_branch("guarded", "main")
    lake.repo.protect_branch("guarded")
    df = spark.range(3).select("id")

    def save(uri: str, mode: str = "append", **options: str) -> None:
        df.write.format("graveler").options(**lake.options, **options).mode(mode).save(uri)

    cases = [
        (lambda: save(lake.uri("nobranch", "x")), "'nobranch' is not a branch of 'lake'"),
        (lambda: save(lake.uri("v0", "x")), "'v0' is not a branch"),
        (lambda: save(lake.uri("guarded", "x")), "is protected"),
        (lambda: save("graveler://nope/main/x"), "repository 'nope' not found"),
        (lambda: save(lake.uri("main"), "overwrite"), "overwrite needs a path prefix"),
        (lambda: save(lake.uri("main", "x"), format="orc"), "write_native"),
        (lambda: save(lake.uri("main", "x"), partitionBy="nope"), "not a column"),
        (lambda: save(lake.uri("main", "x"), partitionOverwriteMode="x"), "static or dynamic"),
        (lambda: save("s3://bucket/x"), "not a graveler://"),
    ]
    for call, message in cases:
        with pytest.raises(Exception, match=message):
            call()
    assert list(lake.repo.store.list("data/")) == []
    assert list(lake.repo.diff_uncommitted("main")) == []


def test_register_binds_connection_defaults(spark, lake: Lake) -> None:
    session = spark.newSession()
    graveler_spark.register(session, home=str(lake.gv.home), database_url=lake.gv.database_url)
    df = session.range(10).select("id")
    df.write.format("graveler").mode("append").save(lake.uri("main", "bound"))
    back = session.read.format("graveler").load(lake.uri("main", "bound"))
    assert sorted(r.id for r in back.collect()) == list(range(10))
    stored = next(lake.repo.iter_objects("main", "bound/"))
    assert stored.content_type == "application/vnd.apache.parquet"
