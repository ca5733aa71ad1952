"""Registering the ``graveler`` format on a Spark session, with connection defaults, filter
pushdown and the optional JVM shim."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graveler import ClientSettings
from graveler_spark.shim import (
    explain_partitioning_errors,
    load_shim,
    missing_shim_reason,
    shim_jar,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from graveler_spark.datasource import GravelerDataSource

PUSHDOWN_SETTING = "spark.sql.python.filterPushdown.enabled"

__all__ = ["PUSHDOWN_SETTING", "activate", "load_shim", "register", "shim_jar"]


def register(
    spark: SparkSession,
    *,
    home: str | None = None,
    database_url: str | None = None,
    store_options: Mapping[str, str] | None = None,
    shim: bool = True,
) -> type[GravelerDataSource]:
    """Register the ``graveler`` format on ``spark`` (replacing the automatic registration),
    turn on filter pushdown for the session and, unless ``shim`` is False, load the JVM shim
    this package ships (:func:`graveler_spark.load_shim`: ``.partitionBy()`` writes, Spark's
    own Parquet reads and writes). Where the shim cannot be loaded (not built, Spark
    Connect), a ``.partitionBy()`` write to a ``graveler://`` path fails with an
    InvalidArgument that says so and names the fix, instead of Spark's own message.

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
    if shim and not load_shim(spark):
        explain_partitioning_errors(missing_shim_reason(spark))
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
