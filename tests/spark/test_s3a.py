"""Spark's own Parquet writer and reader through ``s3a://`` against ``graveler serve``
(hadoop-aws of the wheel's Hadoop, from Maven Central by ``make jars``): a run writes on its
branch, reads back, and the branch merges into ``main``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graveler.client import Graveler
from tests.serving import Key, Served, s3a_settings


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Key]]:
    home = tmp_path_factory.mktemp("s3a") / "home"
    with Served(home) as server:
        server.repository("lake", (home.parent / "ns").as_uri())
        yield server, server.credentials()


def _configure(spark: Any, server: Served, key: Key) -> None:
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    for name, value in s3a_settings(server.url, key).items():
        conf.set(name, value)


def test_parquet_on_a_run_branch_then_merged(spark: Any, served: tuple[Served, Key]) -> None:
    server, key = served
    _configure(spark, server, key)
    with Graveler(server.home) as gv:
        repo = gv.repository("lake")
        repo.create_branch("run-1", "main")
        frame = spark.range(0, 5000).selectExpr("id", "id % 5 AS k", "cast(id AS string) AS s")
        frame.write.mode("overwrite").partitionBy("k").parquet("s3a://lake/run-1/events")
        back = spark.read.parquet("s3a://lake/run-1/events")
        assert back.count() == 5000
        assert back.groupBy("k").count().count() == 5
        frame.write.mode("append").parquet("s3a://lake/run-1/more")
        files = [e.path for e in repo.iter_objects("run-1", prefix="events/")]
        assert "events/_SUCCESS" in files
        assert {p.split("/")[1] for p in files if p.endswith(".parquet")} == {
            f"k={n}" for n in range(5)
        }
        assert not [p for p in files if "_temporary" in p]  # the committer's renames are done
        repo.commit("run-1", "spark run 1")
        repo.merge("run-1", "main")
        assert spark.read.parquet("s3a://lake/main/events").count() == 5000
        assert spark.read.parquet("s3a://lake/main/more").count() == 5000
        assert not repo.exists("main", "events/_temporary")
