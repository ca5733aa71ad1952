"""Registering the ``graveler`` format on a Spark session, with connection defaults, filter
pushdown and the optional JVM shim."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graveler import ClientSettings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from graveler_spark.datasource import GravelerDataSource

PUSHDOWN_SETTING = "spark.sql.python.filterPushdown.enabled"
SHIM_JAR_NAME = "graveler-spark-shim.jar"


def register(
    spark: SparkSession,
    *,
    home: str | None = None,
    database_url: str | None = None,
    store_options: Mapping[str, str] | None = None,
) -> type[GravelerDataSource]:
    """Register the ``graveler`` format on ``spark`` (replacing the automatic registration)
    and turn on filter pushdown for the session.

    The given settings, over the S3A keys of ``spark``'s configuration
    (``spark.hadoop.fs.s3a.*``), become defaults of every read and write: options win over
    them, and they win over the environment of the Spark driver (see
    :mod:`graveler_spark.settings`).

    Pushdown: Spark passes filters to Python data sources only with
    ``spark.sql.python.filterPushdown.enabled=true`` (off by default), and refuses to read
    from a source that implements ``pushFilters`` while it is off. This sets it to true and
    registers a class whose readers take filters (partition pruning, row-group skipping)."""
    from graveler_spark.datasource import GravelerDataSource
    from graveler_spark.settings import spark_settings

    explicit = ClientSettings(
        home=home, database_url=database_url, store_options=dict(store_options or {})
    )
    defaults = explicit.over(spark_settings(spark))
    spark.conf.set(PUSHDOWN_SETTING, "true")
    # A subclass per binding; cloudpickle ships it by value to Spark's Python workers.
    attributes: dict[str, object] = {"pushdown": True, "__qualname__": "GravelerDataSource.<bound>"}
    if defaults != ClientSettings():
        attributes["defaults"] = defaults
    source = type("GravelerDataSource", (GravelerDataSource,), attributes)
    spark.dataSource.register(source)
    return source


def activate(spark: SparkSession) -> None:
    """Make ``spark`` the active session of the calling thread on the JVM side.

    Spark resolves Python data sources for ``df.write.format(...)`` through the thread's active
    session; in a thread that did not create the session there is none and the write fails
    with ``DATA_SOURCE_NOT_FOUND``. Call this at the start of such a thread. It also lets the
    thread see the JVM shim when :func:`load_shim` loaded it at run time."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is not None:  # classic PySpark (Spark Connect has no JVM on the client)
        jvm: Any = spark._jvm
        jvm.org.apache.spark.sql.SparkSession.setActiveSession(jsession)
        loader = jsession.sharedState().jarClassLoader()
        jvm.java.lang.Thread.currentThread().setContextClassLoader(loader)


def shim_jar() -> str | None:
    """The path of the JVM shim jar shipped with this package (None when it was not built).

    With it on the driver's class path, ``df.write.format("graveler").partitionBy(...)``
    works, the session's ``partitionOverwriteMode`` and pushdown settings reach the data
    source, and Parquet reads are read by Spark's own scan over the files the data source
    planned (:mod:`graveler_spark.plan`). Put it there when building the session::

        SparkSession.builder.config("spark.jars", graveler_spark.shim_jar())

    or add it to a running session with :func:`load_shim` (after :func:`register`)."""
    path = os.path.join(os.path.dirname(__file__), "jars", SHIM_JAR_NAME)
    return path if os.path.exists(path) else None


def load_shim(spark: SparkSession) -> bool:
    """Add the JVM shim to a running classic session (``ADD JAR``); True when it was found.
    Call :func:`register` first, if at all: once the calling thread sees a JVM source named
    ``graveler``, Spark refuses to register a Python one under that name
    (``DATA_SOURCE_ALREADY_EXISTS``). Spark looks formats up through the calling thread's class
    loader: other threads call :func:`activate` first."""
    jar = shim_jar()
    if jar is None or getattr(spark, "_jsparkSession", None) is None:
        return False
    spark.sql(f"ADD JAR '{jar}'")
    return True
