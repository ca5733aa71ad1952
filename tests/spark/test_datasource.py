"""The ``graveler`` Python Data Source on a real local Spark session: round trips, overwrite,
concurrent jobs, failing tasks and reproducible reads of tags and commits."""

from __future__ import annotations

import threading

import graveler_spark
import pytest
from pyspark.sql import functions as F

from graveler.client import Graveler
from tests.spark.conftest import Lake

ONE_MILLION = 1_000_000


def _fingerprint(df):
    """Order-independent summary of (id, k) rows."""
    return df.agg(F.count("*"), F.sum("id"), F.sum(F.col("id") * F.col("k"))).first()


def test_format_registers_itself_when_installed(spark) -> None:
    """PySpark's own lookup (the code its planner runs) finds our module; this session never
    called register(), yet every other test here uses format("graveler")."""
    import io

    from pyspark.serializers import read_int
    from pyspark.sql.worker.lookup_data_sources import _main

    out = io.BytesIO()
    _main(io.BytesIO(), out)
    out.seek(0)
    names = [out.read(int.from_bytes(out.read(4), "big")).decode() for _ in range(read_int(out))]
    assert "graveler" in names
    manager = spark._jsparkSession.sessionState().dataSourceManager()
    assert manager.dataSourceExists("graveler")


def test_round_trip_of_a_million_rows_is_one_stage_and_one_commit(spark, lake: Lake) -> None:
    df = spark.range(ONE_MILLION).select("id", (F.col("id") % 7).alias("k"))
    head = lake.repo.branch("main").commit_id
    (
        df.write.format("graveler")
        .options(**lake.options)
        .option("commit_message", "load events")
        .option("commit_metadata", '{"job": "test"}')
        .option("object_metadata", '{"run": "r-1"}')
        .mode("append")
        .save(lake.uri("main", "tables/events"))
    )
    commit = next(lake.repo.log("main"))
    assert commit.parents == (head,) and commit.message == "load events"
    assert commit.metadata == {"job": "test"}
    assert list(lake.repo.diff_uncommitted("main")) == []
    files = list(lake.repo.iter_objects("main", "tables/events/"))
    assert len(files) == df.rdd.getNumPartitions() == 2
    assert all(f.physical_address.startswith("data/") for f in files)
    assert all(f.metadata == {"run": "r-1"} for f in files)

    back = (
        spark.read.format("graveler")
        .options(**lake.options)
        .load(lake.uri("main", "tables/events"))
    )
    assert back.schema.simpleString() == "struct<id:bigint,k:bigint>"
    assert _fingerprint(back) == _fingerprint(df)
    assert back.rdd.getNumPartitions() == len(files)


def test_overwrite_replaces_the_prefix_and_nothing_else(spark, lake: Lake) -> None:
    lake.repo.put("main", "t/xx/keep.csv", b"a\n1\n")  # shares a string prefix with t/x
    lake.repo.put("main", "t/y.csv", b"a\n1\n")
    first = spark.range(30).select("id", F.lit(1).cast("long").alias("k")).repartition(3)
    writer = first.write.format("graveler").options(**lake.options)
    writer.mode("append").option("commit_message", "v1").save(lake.uri("main", "t/x"))
    second = spark.range(5).select("id", F.lit(2).cast("long").alias("k")).coalesce(1)
    second.write.format("graveler").options(**lake.options).mode("overwrite").save(
        lake.uri("main", "t/x")
    )
    changes = sorted(
        (d.type.value, d.path.split("/")[1]) for d in lake.repo.diff_uncommitted("main")
    )
    assert [c for c, _ in changes].count("removed") == 3
    added = [d.path for d in lake.repo.diff_uncommitted("main") if d.type.value == "added"]
    assert len(added) == 2 and "t/x/_graveler_table.json" in added  # one file and the marker
    assert {p for _, p in changes} == {"x"}
    read = spark.read.format("graveler").options(**lake.options).load(lake.uri("main", "t/x"))
    assert sorted(r.id for r in read.collect()) == list(range(5))
    assert {e.path for e in lake.repo.iter_objects("main", "t/")} >= {"t/xx/keep.csv", "t/y.csv"}


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_two_jobs_write_two_branches_concurrently(spark, tmp_path, backend, request) -> None:
    url = (
        f"sqlite:///{tmp_path / 'refs.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("pg_schema_url")
    )
    with Graveler(home=tmp_path / "home", database_url=url) as gv:
        lake = Lake(gv, gv.create_repository("lake", (tmp_path / "ns").as_uri()))
        for name in ("left", "right"):
            lake.repo.create_branch(name, "main")
        errors: list[BaseException] = []

        def job(branch: str, offset: int) -> None:
            try:
                graveler_spark.activate(spark)  # a thread of its own: see activate()
                df = spark.range(offset, offset + 50_000, numPartitions=2).select(
                    "id", F.lit(offset).cast("long").alias("k")
                )
                df.write.format("graveler").options(**lake.options).option(
                    "commit_message", f"job {branch}"
                ).mode("append").save(lake.uri(branch, "out"))
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=job, args=a) for a in (("left", 0), ("right", 10**6))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        for branch, offset in (("left", 0), ("right", 10**6)):
            assert next(lake.repo.log(branch)).message == f"job {branch}"
            df = spark.read.format("graveler").options(**lake.options).load(lake.uri(branch, "out"))
            row = df.agg(F.min("id"), F.max("id"), F.count("*"), F.countDistinct("k")).first()
            assert tuple(row) == (offset, offset + 49_999, 50_000, 1)
        assert list(lake.repo.iter_objects("main")) == []


def test_a_failing_task_leaves_no_staged_entry_and_no_file(spark, lake: Lake, tmp_path) -> None:
    data_dir = lake.repo.store.local_path("data")
    witness = tmp_path / "files-before-failure"

    def explode(batches):
        """The last partition fails, after recording how many files the others wrote."""
        import os
        import time

        for batch in batches:
            if batch.num_rows and batch.column(0)[0].as_py() >= 750:
                time.sleep(0.5)  # let the first three tasks finish their files
                found = sum(len(files) for _, _, files in os.walk(data_dir))
                witness.write_text(str(found))
                raise RuntimeError("task failure on purpose")
            yield batch

    head = lake.repo.branch("main")
    df = spark.range(0, 1_000, numPartitions=4).select("id", F.col("id").alias("k"))
    failing = df.mapInArrow(explode, "id long, k long")
    with pytest.raises(Exception, match="task failure on purpose"):
        failing.write.format("graveler").options(**lake.options).option(
            "commit_message", "never"
        ).mode("append").save(lake.uri("main", "out"))
    assert int(witness.read_text()) >= 2, "the other tasks had written files"
    assert lake.repo.branch("main") == head
    assert list(lake.repo.diff_uncommitted("main")) == []
    assert list(lake.repo.store.list("data/")) == []


def test_reading_a_tag_after_the_branch_moved_returns_the_old_data(spark, lake: Lake) -> None:
    def write(value: int, mode: str) -> None:
        df = spark.range(100).select("id", F.lit(value).cast("long").alias("k"))
        df.write.format("graveler").options(**lake.options).option(
            "commit_message", f"v{value}"
        ).mode(mode).save(lake.uri("main", "t"))

    write(1, "append")
    v1 = lake.repo.create_tag("v1", "main")
    tagged = spark.read.format("graveler").options(**lake.options).load(lake.uri("v1", "t"))
    write(2, "overwrite")
    write(3, "overwrite")

    def ks(ref: str) -> set[int]:
        df = spark.read.format("graveler").options(**lake.options).load(lake.uri(ref, "t"))
        return {r.k for r in df.select("k").distinct().collect()}

    assert ks("v1") == {1} and ks(v1.commit_id) == {1} and ks(v1.commit_id[:12]) == {1}
    assert ks("main") == {3} and ks("main~1") == {2}
    assert {r.k for r in tagged.select("k").distinct().collect()} == {1}
