"""Spark with Iceberg's runtime and its REST catalog on graveler serve: SQL DDL, INSERT,
MERGE INTO, UPDATE, DELETE, procedures, and reads at branches, tags and commits."""

from __future__ import annotations

import pytest

from graveler.repository import Repository
from tests.iceberg.spark import SparkDriver, SparkFailure


def rows(spark: SparkDriver, table: str) -> list[tuple[object, ...]]:
    return [tuple(r.values()) for r in spark.sql(f"SELECT * FROM {table} ORDER BY id")]


def test_sql_on_branches_tags_and_commits(spark: SparkDriver, served_repo: Repository):
    spark.sql("CREATE NAMESPACE gv.main.sp")
    spark.sql(
        "CREATE TABLE gv.main.sp.t (id bigint, p int, v string) USING iceberg "
        "PARTITIONED BY (p) TBLPROPERTIES ('write.merge.mode'='merge-on-read')"
    )
    assert spark.sql("SHOW TABLES IN gv.main.sp")[0]["tableName"] == "t"
    spark.sql("INSERT INTO gv.main.sp.t VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c')")
    spark.sql(
        "MERGE INTO gv.main.sp.t t USING (SELECT 2 AS id, 1 AS p, 'm' AS v UNION ALL "
        "SELECT 4, 2, 'n') s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
    )
    served_repo.create_tag("sp1", "main")
    commit = served_repo.branch("main").commit_id
    spark.sql("UPDATE gv.main.sp.t SET v = 'u' WHERE id = 3")
    spark.sql("DELETE FROM gv.main.sp.t WHERE id = 1")
    spark.sql("ALTER TABLE gv.main.sp.t ADD COLUMN note string")
    assert rows(spark, "gv.main.sp.t") == [(2, 1, "m", None), (3, 2, "u", None), (4, 2, "n", None)]
    at_tag = [(1, 1, "a"), (2, 1, "m"), (3, 2, "c"), (4, 2, "n")]
    assert rows(spark, "gv.sp1.sp.t") == at_tag
    assert rows(spark, f"gv.`{commit}`.sp.t") == at_tag
    with pytest.raises(SparkFailure) as caught:
        spark.sql("INSERT INTO gv.sp1.sp.t VALUES (9, 1, 'x')")
    assert caught.value.caused_by("ForbiddenException")
    history = spark.sql("SELECT snapshot_id FROM gv.main.sp.t.snapshots ORDER BY committed_at")
    first = history[0]["snapshot_id"]
    assert len(spark.sql(f"SELECT * FROM gv.main.sp.t VERSION AS OF {first}")) == 3
    done = spark.sql("CALL gv.system.rewrite_data_files(table => 'main.sp.t')")
    assert done[0]["failed_data_files_count"] == 0
    assert len(rows(spark, "gv.main.sp.t")) == 3


def test_a_run_branch_written_by_spark_and_merged(spark: SparkDriver, served_repo: Repository):
    spark.sql("CREATE NAMESPACE gv.main.runs")
    spark.sql("CREATE TABLE gv.main.runs.t (id bigint, v string) USING iceberg")
    spark.sql("INSERT INTO gv.main.runs.t VALUES (1, 'main')")
    served_repo.create_branch("etl-7", "main")
    spark.sql("INSERT INTO gv.`etl-7`.runs.t VALUES (2, 'run')")
    spark.sql("INSERT INTO gv.main.runs.t VALUES (3, 'main')")
    assert [r["id"] for r in spark.sql("SELECT id FROM gv.main.runs.t ORDER BY id")] == [1, 3]
    served_repo.merge("etl-7", "main")
    served_repo.delete_branch("etl-7")
    assert rows(spark, "gv.main.runs.t") == [(1, "main"), (2, "run"), (3, "main")]
