"""A spark-submit driver: data source writes, reads and merges of ``graveler://lake`` on the
cluster, with faults. The driver is given its settings only through its environment
(``GRAVELER_DATABASE_URL``, ``GRAVELER_S3_ENDPOINT_URL``, ``AWS_*``); the executors have
none. Usage: ``datasource_job.py CONFIG_JSON``; prints one ``RESULT {json}`` line per step.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from graveler import Graveler

EVENTS = "graveler://lake/{branch}/{path}"


def table(spark: SparkSession, rows: int, offset: int = 0) -> DataFrame:
    ids = spark.range(offset, offset + rows, numPartitions=8)
    return ids.select("id", (F.col("id") % 7).alias("k"), (F.col("id") * 0.5).alias("v"))


def checksums(df: DataFrame) -> list[Any]:
    row = df.agg(F.count("*"), F.sum("id"), F.sum("k"), F.sum("v")).first()
    assert row is not None
    return list(row)


def write(df: DataFrame, branch: str, path: str, message: str) -> None:
    target = EVENTS.format(branch=branch, path=path)
    df.write.format("graveler").option("commit_message", message).mode("append").save(target)


def read(spark: SparkSession, ref: str, path: str) -> DataFrame:
    return spark.read.format("graveler").load(EVENTS.format(branch=ref, path=path))


def faulty(mode: str, signal_dir: str, delay: float):  # type: ignore[no-untyped-def]
    """An identity over Arrow batches that fails (``once`` / ``always``) in partition 3, or
    only marks its start in ``signal_dir`` and slows down (``slow``)."""

    def run(batches):  # type: ignore[no-untyped-def]
        from pyspark import TaskContext

        ctx = TaskContext.get()
        assert ctx is not None
        part, attempt = ctx.partitionId(), ctx.attemptNumber()
        if mode == "slow":
            open(os.path.join(signal_dir, f"started-{part}-{attempt}-{os.getpid()}"), "w").close()
        if part == 3 and (mode == "always" or (mode == "once" and attempt == 0)):
            raise RuntimeError(f"injected failure in partition {part}, attempt {attempt}")
        for batch in batches:
            time.sleep(delay)
            yield batch

    return run


def with_fault(df: DataFrame, mode: str, signal_dir: str, delay: float = 0.0) -> DataFrame:
    return df.mapInArrow(faulty(mode, signal_dir, delay), df.schema)


def step_write_read(spark: SparkSession, cfg: dict[str, Any]) -> dict[str, Any]:
    source = table(spark, cfg["rows"])
    write(source, "etl", "events", "events from the cluster")
    return {"source": checksums(source), "read": checksums(read(spark, "etl", "events"))}


def step_merge(spark: SparkSession, cfg: dict[str, Any]) -> dict[str, Any]:
    with Graveler() as gv:  # the driver's environment: PostgreSQL and S3
        repo = gv.repository("lake")
        fast_forward = repo.merge("etl", "main", message="fast-forward")
        main_after_ff = checksums(read(spark, "main", "events"))
        write(table(spark, 1000, offset=10**7), "etl", "more", "more on etl")
        write(table(spark, 500, offset=2 * 10**7), "main", "dims", "dims on main")
        three_way = repo.merge("etl", "main", message="three-way")
    return {
        "fast_forward": fast_forward.fast_forward,
        "main_after_ff": main_after_ff,
        "three_way_parents": len(three_way.commit.parents),
        "main": {p: checksums(read(spark, "main", p)) for p in ("events", "more", "dims")},
    }


def step_retry(spark: SparkSession, cfg: dict[str, Any]) -> dict[str, Any]:
    source = table(spark, cfg["rows"], offset=3 * 10**7)
    write(with_fault(source, "once", cfg["signal_dir"]), "etl", "retried", "retried")
    return {"source": checksums(source), "read": checksums(read(spark, "etl", "retried"))}


def step_fail(spark: SparkSession, cfg: dict[str, Any]) -> dict[str, Any]:
    source = table(spark, cfg["rows"], offset=4 * 10**7)
    try:
        write(with_fault(source, "always", cfg["signal_dir"]), "etl", "failed", "never")
    except Exception as exc:
        return {"error": str(exc)[:4000]}
    return {"error": None}


def step_kill(spark: SparkSession, cfg: dict[str, Any]) -> dict[str, Any]:
    source = table(spark, cfg["kill_rows"], offset=5 * 10**7)
    print("KILL-WINDOW-OPEN", flush=True)  # the test kills an executor once tasks run
    write(with_fault(source, "slow", cfg["signal_dir"], 0.5), "etl", "killed", "survived")
    return {"source": checksums(source), "read": checksums(read(spark, "etl", "killed"))}


STEPS = {
    "write_read": step_write_read,
    "merge": step_merge,
    "retry": step_retry,
    "fail": step_fail,
    "kill": step_kill,
}


def main() -> None:
    cfg = json.loads(sys.argv[1])
    # A plain session, as in any user's job: the format registers itself, and the driver's
    # environment is all the configuration there is.
    spark = SparkSession.builder.appName("graveler-cluster-datasource").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print("RESULT " + json.dumps({"step": "app", "id": spark.sparkContext.applicationId}))
    for name in cfg["steps"]:
        started = time.monotonic()
        out = STEPS[name](spark, cfg)
        out.update(step=name, seconds=round(time.monotonic() - started, 1))
        print("RESULT " + json.dumps(out), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
