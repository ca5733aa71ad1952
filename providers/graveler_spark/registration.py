"""Registering the ``graveler`` format on a Spark session, with connection defaults."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from graveler import ClientSettings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from graveler_spark.datasource import GravelerDataSource

FORMAT_NAME = "graveler"


def register(
    spark: SparkSession,
    *,
    home: str | None = None,
    database_url: str | None = None,
    store_options: Mapping[str, str] | None = None,
) -> type[GravelerDataSource]:
    """Register the ``graveler`` format on ``spark`` (replacing the automatic registration).

    The given settings, over the S3A keys of ``spark``'s configuration
    (``spark.hadoop.fs.s3a.*``), become defaults of every read and write: options win over
    them, and they win over the environment of the Spark driver (see
    :mod:`graveler_spark.settings`)."""
    from graveler_spark.datasource import GravelerDataSource
    from graveler_spark.settings import spark_settings

    explicit = ClientSettings(
        home=home, database_url=database_url, store_options=dict(store_options or {})
    )
    defaults = explicit.over(spark_settings(spark))
    source: type[GravelerDataSource] = GravelerDataSource
    if defaults != ClientSettings():
        # A subclass per binding; cloudpickle ships it by value to Spark's Python workers.
        source = type(
            "GravelerDataSource",
            (GravelerDataSource,),
            {"defaults": defaults, "__qualname__": "GravelerDataSource.<bound>"},
        )
    spark.dataSource.register(source)
    return source


def activate(spark: SparkSession) -> None:
    """Make ``spark`` the active session of the calling thread on the JVM side.

    Spark resolves Python data sources for ``df.write.format(...)`` through the thread's active
    session; in a thread that did not create the session there is none and the write fails
    with ``DATA_SOURCE_NOT_FOUND``. Call this at the start of such a thread."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is not None:  # classic PySpark (Spark Connect has no JVM on the client)
        spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(jsession)  # type: ignore[union-attr]
