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

from typing import TYPE_CHECKING

from airflow.sdk import DAG, get_current_context, task
from graveler_airflow import GravelerHook, GravelerRunBranch

if TYPE_CHECKING:
    from collections.abc import Iterator

    from graveler import ObjectEntry, Repository

RAW = "raw/weather.csv"
CLEAN = "clean/weather"
TEMP_RANGE_C = (-90.0, 60.0)


def _repository(hook: GravelerHook) -> Repository:
    return hook.get_repository(get_current_context()["params"]["repository"])


def _data_files(repo: Repository, ref: str) -> Iterator[ObjectEntry]:
    """The Parquet files of the clean table: names starting with ``_`` are not data (Spark's
    markers, the table's overwrite marker; see docs/spark.md)."""
    for entry in repo.iter_objects(ref, CLEAN + "/"):
        if not entry.path.rsplit("/", 1)[-1].startswith("_"):
            yield entry


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
        """PySpark through the ``graveler`` data source: read the raw CSV on the run branch,
        drop rows without a temperature, add Fahrenheit, and replace the Parquet dataset under
        ``clean/weather`` (one staging transaction for the whole job)."""
        import graveler_spark
        from pyspark.sql import functions as F

        # Its Python workers run this environment, which has graveler and pyarrow.
        spark = graveler_spark.spark_session(
            "local[2]",
            app_name="graveler-weather-etl",
            config={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"},
        )
        try:
            with GravelerHook() as hook:
                settings = hook.get_settings()
                graveler_spark.register(  # the data source uses the Airflow connection
                    spark,
                    home=settings.home,
                    database_url=settings.database_url,
                    store_options=dict(settings.store_options) or None,
                )
                repo = _repository(hook)
                on_branch = f"graveler://{repo.name}/{branch}"
                df = (
                    spark.read.format("graveler")
                    .option("format", "csv")
                    .schema("city STRING, temp_c DOUBLE")
                    .load(f"{on_branch}/{RAW}")
                )
                clean = df.where(F.col("temp_c").isNotNull()).withColumn(
                    "temp_f", F.round(F.col("temp_c") * 9 / 5 + 32, 1)
                )
                clean.coalesce(1).write.format("graveler").mode("overwrite").save(
                    f"{on_branch}/{CLEAN}"
                )
                return sum(1 for _ in _data_files(repo, branch))
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
            for entry in _data_files(repo, branch):
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
