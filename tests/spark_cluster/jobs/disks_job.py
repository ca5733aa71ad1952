"""A spark-submit driver for ``file://`` namespaces on a cluster, with the embedded default
(``GRAVELER_HOME`` in the environment: SQLite and namespaces under it) and ``fs.defaultFS``
pointing at an HDFS that does not exist.

* ``lake`` lives in the default namespace under ``GRAVELER_HOME``, on a directory every worker
  has its own tmpfs over: the data source and ``write_native`` must fail and stage nothing;
* ``shared`` lives on a directory every host shares: both must work, and read back exactly.

Usage: ``disks_job.py CONFIG_JSON``; prints one ``RESULT {json}`` line per step.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from graveler_spark import read_native, spark_session, write_native
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from graveler import Graveler


def table(spark: SparkSession, rows: int) -> DataFrame:
    ids = spark.range(rows, numPartitions=8)
    return ids.select("id", (F.col("id") % 7).alias("k"), (F.col("id") * 0.5).alias("v"))


def checksums(df: DataFrame) -> list[Any]:
    row = df.agg(F.count("*"), F.sum("id"), F.sum("k"), F.sum("v")).first()
    assert row is not None
    return list(row)


def driver_files(directory: str) -> list[str]:
    """Every file under ``directory`` as the driver sees it."""
    return sorted(
        os.path.relpath(os.path.join(root, name), directory)
        for root, _, names in os.walk(directory)
        for name in names
    )


def state(gv: Graveler, name: str) -> dict[str, Any]:
    repo = gv.repository(name)
    namespace = repo.info.storage_namespace.removeprefix("file://")
    return {
        "namespace": namespace,
        "commits": [c.message for c in repo.log("main")],
        "objects": [e.path for e in repo.iter_objects("main")],
        "data_files": driver_files(os.path.join(namespace, "data")),
    }


def attempt(run: Any) -> str | None:
    try:
        run()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"[:6000]
    return None


def step_isolated(spark: SparkSession, gv: Graveler, cfg: dict[str, Any]) -> dict[str, Any]:
    gv.create_repository("lake")  # the default namespace, under GRAVELER_HOME
    df = table(spark, cfg["rows"])
    writer = df.write.format("graveler").option("commit_message", "never").mode("append")
    source_error = attempt(lambda: writer.save("graveler://lake/main/events"))
    native_error = attempt(
        lambda: write_native(df, "graveler://lake/main/native", format="csv", client=gv)
    )
    return {"source_error": source_error, "native_error": native_error, **state(gv, "lake")}


def step_shared(spark: SparkSession, gv: Graveler, cfg: dict[str, Any]) -> dict[str, Any]:
    gv.create_repository("shared", "file://" + cfg["shared_namespace"])
    df = table(spark, cfg["rows"])
    writer = df.write.format("graveler").option("commit_message", "source").mode("append")
    writer.save("graveler://shared/main/events")
    source = spark.read.format("graveler").load("graveler://shared/main/events")
    entries = write_native(
        df, "graveler://shared/main/native", partition_by=["k"], commit_message="native", client=gv
    )
    native = read_native(spark, "graveler://shared/main/native", client=gv)
    return {
        "expected": checksums(df),
        "source": checksums(source),
        "native_entries": len(entries),
        "native": checksums(native.select("id", "v").withColumn("k", F.col("id") % 7)),
        "default_fs": spark.sparkContext._jsc.hadoopConfiguration().get("fs.defaultFS"),
        **state(gv, "shared"),
    }


def main() -> None:
    cfg = json.loads(sys.argv[1])
    # The helper, under spark-submit: the master is spark-submit's.
    spark = spark_session(app_name="graveler-cluster-disks", log_level="WARN")
    assert spark.sparkContext.master.startswith("spark://"), spark.sparkContext.master
    with Graveler() as gv:  # GRAVELER_HOME from the environment, SQLite in it
        for name, step in (("isolated", step_isolated), ("shared", step_shared)):
            if name in cfg["steps"]:
                out = step(spark, gv, cfg)
                print("RESULT " + json.dumps({"step": name, **out}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
