"""Example Dagster project on graveler: a PySpark asset and a pandas asset, each run on its own
branch, merged into ``main`` when the run succeeds.

    DAGSTER_HOME=~/dagster-home dagster dev -f dags_examples/dagster/definitions.py

* ``raw_events`` (PySpark) builds a small events table and writes it as Parquet onto the run
  branch with the ``graveler`` Spark data source (``df.write.format("graveler")``, in
  :func:`write_spark_parquet`); the asset then commits the branch with the run's ID.
* ``daily_revenue`` (pandas) reads those Parquet files -- from the run branch when this run
  wrote them, else from ``main`` -- and returns a DataFrame, stored by the IO manager at
  ``graveler://lake/<run branch>/daily_revenue``.
* ``graveler_definitions`` adds the resource, the IO manager and the merge / failure sensors.

Graveler keeps its SQLite refs and the ``lake`` repository under ``$DAGSTER_HOME/graveler``.
"""

import io
import json
from typing import Any

import dagster as dg
import graveler_spark
import pandas as pd
from graveler_dagster import (
    RUN_ID_KEY,
    GravelerResource,
    commit_staged,
    graveler_definitions,
    open_run_branch,
    read_ref_for_prefix,
    run_lineage,
)
from pyspark.sql import DataFrame as SparkDataFrame
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

EVENTS_PREFIX = "events/raw_events"


class SparkSessionResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """A Spark session from :func:`graveler_spark.spark_session` (reuses the active one; its
    Python workers run this environment, which has graveler and pyarrow)."""

    master: str = "local[2]"
    shuffle_partitions: int = 2

    def session(self) -> SparkSession:
        return graveler_spark.spark_session(
            self.master,
            app_name="graveler-dagster-example",
            config={
                "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
                "spark.ui.enabled": "false",
            },
        )


def write_spark_parquet(
    df: SparkDataFrame, graveler: GravelerResource, uri: str, run_id: str
) -> None:
    """Replace the Parquet dataset at ``uri`` (``graveler://repo/branch/prefix``) with ``df``
    through the ``graveler`` Spark data source: executors write the files into the
    repository's storage namespace and the driver stages them all in one transaction. Each
    file carries the run ID, which tells later runs whose output it is."""
    gv = graveler.get_client()
    graveler_spark.register(  # the data source uses the resource's database and home
        df.sparkSession,
        home=str(gv.home),
        database_url=gv.database_url,
        store_options=gv.store_options or None,
    )
    writer = df.write.format("graveler").mode("overwrite")
    writer.option("object_metadata", json.dumps({RUN_ID_KEY: run_id})).save(uri)


@dg.asset(kinds={"spark"})
def raw_events(
    context: dg.AssetExecutionContext, graveler: GravelerResource, spark: SparkSessionResource
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """Synthetic click events, written by Spark onto the run's branch."""
    session = spark.session()
    df = (
        session.range(0, 1000)
        .withColumn("day", F.concat(F.lit("2024-01-0"), (F.col("id") % 3 + 1).cast("string")))
        .withColumn("amount", (F.col("id") % 17).cast("double"))
        .repartition(2)
    )
    repo, branch = open_run_branch(graveler, context)
    uri = f"graveler://{repo.name}/{branch}/{EVENTS_PREFIX}"
    write_spark_parquet(df, graveler, uri, context.run.run_id)
    files = sum(1 for e in repo.iter_objects(branch, EVENTS_PREFIX + "/") if _is_data(e.path))
    commit = commit_staged(repo, branch, "Spark: raw_events", {RUN_ID_KEY: context.run.run_id})
    return dg.MaterializeResult(
        metadata={
            # by commit: still resolves once the run branch is merged and deleted
            "graveler/uri": dg.MetadataValue.path(
                f"graveler://{repo.name}/{commit.id}/{EVENTS_PREFIX}/"
            ),
            "graveler/commit": commit.id,
            "files": files,
            "dagster/row_count": 1000,
        }
    )


def _is_data(path: str) -> bool:
    """Names starting with ``_`` are not data: Spark's markers, the table's overwrite marker
    (docs/spark.md)."""
    return not path.rsplit("/", 1)[-1].startswith("_")


@dg.asset(deps=[raw_events], kinds={"pandas"})
def daily_revenue(context: dg.AssetExecutionContext, graveler: GravelerResource) -> pd.DataFrame:
    """Revenue per day, from the Spark output (this run's, or main's)."""
    repo = graveler.get_repository()
    ref = read_ref_for_prefix(
        graveler, repo, EVENTS_PREFIX + "/", run_lineage(context.instance, context.run)
    )
    frames = [
        pd.read_parquet(io.BytesIO(repo.get(ref, e.path)))
        for e in repo.iter_objects(ref, EVENTS_PREFIX + "/")
        if _is_data(e.path)
    ]
    events = pd.concat(frames, ignore_index=True)
    return (
        events.groupby("day", as_index=False)["amount"]
        .sum()
        .sort_values("day")
        .reset_index(drop=True)
    )


def build_definitions(graveler: GravelerResource, **kwargs: Any) -> dg.Definitions:
    """The example's Definitions for a given resource (tests pass a temporary one)."""
    pieces = graveler_definitions(graveler, **kwargs)
    return dg.Definitions(
        assets=[raw_events, daily_revenue],
        resources={**pieces["resources"], "spark": SparkSessionResource()},
        sensors=pieces["sensors"],
    )


defs = build_definitions(GravelerResource(repository="lake"))
