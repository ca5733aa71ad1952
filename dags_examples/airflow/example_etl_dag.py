"""Example ETL on a branch per run: land raw CSV, clean it into Parquet with PySpark, validate,
and merge into ``main`` only when every step succeeded.

    run branch  airflow-graveler_example_etl-<run id>-<hash>   (created from main)
      extract   landing CSV            -> raw/weather.csv
      transform raw/weather.csv (Spark) -> clean/weather/part-*.parquet
      validate  temperatures plausible, rows present; raises otherwise
      merge     commit + merge commit into main (run metadata), asset events

A failed run leaves ``main`` untouched and keeps its branch for inspection. Connection:
``graveler_default``. Params: ``repository`` (default ``lake``) and ``landing`` (path of the
CSV to ingest). ``make demo`` runs this DAG twice, with good and with bad data.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from airflow.sdk import DAG, get_current_context, task
from graveler_airflow import GravelerHook, GravelerRunBranch

from graveler.errors import InvalidArgument

if TYPE_CHECKING:
    from graveler.repository import Repository

RAW = "raw/weather.csv"
CLEAN = "clean/weather"
TEMP_RANGE_C = (-90.0, 60.0)


def write_parquet_to_branch(df: Any, repo: Repository, branch: str, path: str) -> int:
    """Replace the Parquet dataset under ``path`` on ``branch`` with ``df``; returns how many
    files were staged.

    Stand-in for ``df.write.format("graveler")`` until the Spark data source exists: Spark
    writes into a scratch directory inside the repository's (local) storage namespace; the
    previous files under ``path`` are staged as deleted and the new files are linked onto the
    branch (one transaction for all of them, no copy). Nothing is visible outside the run
    branch until it is merged."""
    scratch = f"_scratch/{uuid.uuid4().hex}"
    df.write.parquet(_local_path(repo, scratch))
    entries = [
        repo.make_linked_entry(f"{path}/{info.key.rsplit('/', 1)[-1]}", info.key)
        for info in repo.store.list(scratch + "/")
        if info.key.endswith(".parquet")  # skips _SUCCESS and .crc checksum files
    ]
    fresh = {e.path for e in entries}
    old = [e.path for e in repo.iter_objects(branch, path + "/") if e.path not in fresh]
    repo.delete_many(branch, old)
    return repo.stage_entries(branch, entries)


def _local_path(repo: Repository, key: str) -> str:
    path = repo.store.local_path(key)
    if path is None:
        raise InvalidArgument(
            f"{repo.name}: this example needs a local (file://) storage namespace until the "
            "Spark data source can write to any namespace"
        )
    return path


def _repository(hook: GravelerHook) -> Repository:
    return hook.get_repository(get_current_context()["params"]["repository"])


with (
    DAG(
        "graveler_example_etl",
        schedule=None,
        params={"repository": "lake", "landing": "landing/weather.csv"},
        tags=["graveler", "example"],
        doc_md=__doc__,
    ),
    GravelerRunBranch("{{ params.repository }}", group_id="run") as run,
):

    @task
    def extract(branch: str) -> str:
        """Copy the landing file onto the run branch."""
        landing = get_current_context()["params"]["landing"]
        with GravelerHook() as hook, open(landing, "rb") as fh:
            entry = _repository(hook).put(branch, RAW, fh, content_type="text/csv")
        return entry.checksum

    @task
    def transform(branch: str) -> int:
        """PySpark: drop rows without a temperature, add Fahrenheit, write Parquet."""
        from pyspark.sql import SparkSession
        from pyspark.sql import functions as F

        spark = (
            SparkSession.builder.master("local[2]")
            .appName("graveler-weather-etl")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .getOrCreate()
        )
        try:
            with GravelerHook() as hook:
                repo = _repository(hook)
                raw = _local_path(repo, repo.stat(branch, RAW).physical_address)
                df = spark.read.csv(raw, header=True, schema="city STRING, temp_c DOUBLE")
                clean = df.where(F.col("temp_c").isNotNull()).withColumn(
                    "temp_f", F.round(F.col("temp_c") * 9 / 5 + 32, 1)
                )
                return write_parquet_to_branch(clean.coalesce(1), repo, branch, CLEAN)
        finally:
            spark.stop()

    @task
    def validate(branch: str) -> int:
        """Every row has a plausible temperature; at least one row."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        low, high = TEMP_RANGE_C
        rows = 0
        with GravelerHook() as hook:
            repo = _repository(hook)
            for entry in repo.iter_objects(branch, CLEAN + "/"):
                data = pa.BufferReader(repo.get(branch, entry.path))
                table = pq.read_table(data).to_pylist()
                for row in table:
                    if not low <= row["temp_c"] <= high:
                        city, temp = row["city"], row["temp_c"]
                        raise ValueError(f"implausible temperature {temp} for {city}")
                rows += len(table)
        if rows == 0:
            raise ValueError("no clean rows produced")
        return rows

    extract(run.branch) >> transform(run.branch) >> validate(run.branch)
