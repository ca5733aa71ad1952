"""Native Spark writers (csv, json, partitioned parquet) linked into a branch in one transaction."""

from __future__ import annotations

import os

import pytest
from graveler_spark import native_write, read_native, write_native
from pyspark.sql import functions as F

from tests.spark.conftest import Lake


def test_partitioned_csv_is_linked_without_markers(spark, lake: Lake) -> None:
    df = spark.range(20).select("id", (F.col("id") % 2).alias("half"))
    entries = write_native(
        df,
        lake.uri("main", "exports/daily"),
        format="csv",
        options={"header": "true"},
        partition_by=["half"],
        commit_message="export",
        client=lake.gv,
    )
    paths = [e.path for e in lake.repo.iter_objects("main", "exports/")]
    assert paths == sorted(e.path for e in entries) and len(paths) >= 2
    assert {p.split("/")[2] for p in paths} == {"half=0", "half=1"}
    assert all(p.endswith(".csv") for p in paths)
    assert next(lake.repo.log("main")).message == "export"
    scratch = os.path.dirname(
        os.path.dirname(lake.repo.store.local_path(entries[0].physical_address))
    )
    left = sorted(f for _, _, files in os.walk(scratch) for f in files)
    assert left == sorted(os.path.basename(e.physical_address) for e in entries)
    back = spark.read.format("graveler").options(**lake.options).option("format", "csv")
    rows = back.load(lake.uri("main", "exports/daily")).collect()
    assert sorted(r.id for r in rows) == list(range(20))


def test_overwrite_and_json(spark, lake: Lake) -> None:
    lake.repo.put("main", "j/old.json", b'{"id": 99}\n')
    df = spark.range(4).select("id").coalesce(1)
    write_native(df, lake.uri("main", "j"), format="json", mode="overwrite", client=lake.gv)
    paths = [e.path for e in lake.repo.iter_objects("main", "j/") if "/_graveler" not in e.path]
    assert len(paths) == 1 and paths[0].endswith(".json") and "j/old.json" not in paths
    assert lake.repo.get("main", paths[0]).count(b"\n") == 4


def test_a_failing_writer_leaves_nothing(lake: Lake) -> None:
    seen: list[str] = []

    def write(directory: str) -> None:
        seen.append(directory)
        os.makedirs(directory)
        with open(os.path.join(directory, "part-0.csv"), "w") as fh:
            fh.write("a\n1\n")
        raise RuntimeError("the Spark job failed")

    with pytest.raises(RuntimeError, match="the Spark job failed"):
        native_write(lake.uri("main", "x"), write, client=lake.gv)
    assert not os.path.exists(seen[0])
    assert list(lake.repo.diff_uncommitted("main")) == []
    with pytest.raises(Exception, match="mode must be one of"):
        native_write(lake.uri("main", "x"), write, mode="ignore", client=lake.gv)


def test_read_native_pins_the_ref_and_uses_sparks_reader(spark, lake: Lake) -> None:
    df = spark.range(50).select("id", F.lit(1).alias("k"))
    write_native(df, lake.uri("main", "p"), commit_message="v1", client=lake.gv)
    lake.repo.create_tag("v1", "main")
    newer = spark.range(5).select("id", F.lit(2).alias("k"))
    write_native(
        newer, lake.uri("main", "p"), mode="overwrite", commit_message="v2", client=lake.gv
    )
    old = read_native(spark, lake.uri("v1", "p"), client=lake.gv)
    assert "FileScan parquet" in old._jdf.queryExecution().executedPlan().toString()
    assert sorted(r.id for r in old.collect()) == list(range(50))
    assert {r.k for r in read_native(spark, lake.uri("main", "p"), client=lake.gv).collect()} == {2}
    lake.repo.put("main", "c/x.csv", b"a,b\n1,2\n")
    csv = read_native(
        spark, lake.uri("main", "c/x.csv"), format="csv", options={"header": "true"}, client=lake.gv
    )
    assert [tuple(r) for r in csv.collect()] == [("1", "2")]
    with pytest.raises(Exception, match="no objects at"):
        read_native(spark, lake.uri("main", "nothing"), client=lake.gv)
