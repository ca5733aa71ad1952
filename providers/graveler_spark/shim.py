"""The JVM shim: finding the jar this package ships, loading it into a running session, and
saying what to do when a session cannot have it.

Spark checks ``.partitionBy(...)`` against the partitioning a table declares before it calls
the data source, and a Python data source cannot declare any: without the shim such a write
fails inside Spark with ``The provided partitioning or clustering columns do not match the
existing table's``, a message that names neither graveler nor the fix.
:func:`explain_partitioning_errors` makes that failure, for writes to ``graveler://`` paths,
say what is missing and how to get it.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graveler.errors import InvalidArgument

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SHIM_JAR_NAME = "graveler-spark-shim.jar"
#: The shim's entry class (registered as the JVM source named ``graveler``).
SHIM_CLASS = "io.graveler.spark.GravelerTableProvider"
#: What Spark says when a write's partitioning differs from the table's (no error class).
PARTITIONING_MISMATCH = "partitioning or clustering columns do not match"
_SCHEMES = ("graveler://", "lakefs://")
_WRAPPED = "__graveler_explains_partitioning__"


def shim_jar() -> str | None:
    """The path of the JVM shim jar shipped with this package (None when it was not built).

    With it on the driver's class path, ``df.write.format("graveler").partitionBy(...)``
    works, the session's ``partitionOverwriteMode`` and pushdown settings reach the data
    source, and Parquet reads are read by Spark's own scan over the files the data source
    planned (:mod:`graveler_spark.plan`). :func:`graveler_spark.register` loads it into the
    session; it can also be put there when the session is built::

        SparkSession.builder.config("spark.jars", graveler_spark.shim_jar())
    """
    path = os.path.join(os.path.dirname(__file__), "jars", SHIM_JAR_NAME)
    return path if os.path.exists(path) else None


def shim_loaded(spark: SparkSession) -> bool:
    """Whether ``spark``'s JVM sees the shim through the session's class loader (False for
    Spark Connect, which has no JVM on the client)."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        return False
    jvm: Any = spark._jvm
    loader = jsession.sharedState().jarClassLoader()
    try:
        jvm.java.lang.Class.forName(SHIM_CLASS, False, loader)
    except Exception:  # py4j's Py4JJavaError: ClassNotFoundException
        return False
    return True


def load_shim(spark: SparkSession) -> bool:
    """Add the JVM shim to a running classic session (``ADD JAR``) unless it sees it already;
    True when the session has it. Call :func:`graveler_spark.register` first, if at all (it
    calls this itself): once the calling thread sees a JVM source named ``graveler``, Spark
    refuses to register a Python one under that name (``DATA_SOURCE_ALREADY_EXISTS``). Spark
    looks formats up through the calling thread's class loader: other threads call
    :func:`graveler_spark.activate` first."""
    jar = shim_jar()
    if getattr(spark, "_jsparkSession", None) is None:
        return False
    if shim_loaded(spark):
        return True
    if jar is None:
        return False
    spark.sql(f"ADD JAR '{jar}'")
    return True


def missing_shim_reason(spark: SparkSession) -> str:
    """Why ``spark`` cannot have the shim, in words, with the fix."""
    if getattr(spark, "_jsparkSession", None) is None:
        return (
            "this is a Spark Connect session (no JVM here to load the graveler JVM shim into): "
            "add graveler_spark.shim_jar()'s jar to the Spark Connect server's spark.jars"
        )
    return (
        f"the graveler JVM shim ({SHIM_JAR_NAME}) was not built with this installation: run "
        "`make shim` in a checkout, or reinstall graveler[spark] from a build that ships it, "
        "then call graveler_spark.register(spark) again"
    )


def explain_partitioning_errors(reason: str) -> None:
    """Make ``.partitionBy()`` writes to ``graveler://`` paths that Spark refuses for want of
    the shim fail with :class:`graveler.errors.InvalidArgument` saying so and naming the fix
    (``reason``), chained to Spark's own error. Wraps ``DataFrameWriter.save`` (classic, and
    Spark Connect's when a Connect session has loaded it) once per process; every other
    write is untouched. Spark Connect's module is never imported here: without its client
    dependencies, importing it from ``python -c`` ends the process."""
    from pyspark.sql.readwriter import DataFrameWriter

    _wrap_save(DataFrameWriter, reason)
    connect = sys.modules.get("pyspark.sql.connect.readwriter")
    if connect is not None:
        _wrap_save(connect.DataFrameWriter, reason)


def _wrap_save(cls: Any, reason: str) -> None:
    current = cls.save
    if getattr(current, _WRAPPED, None) is not None:
        setattr(current, _WRAPPED, reason)  # the latest reason wins
        return
    cls.save = _explaining(current, reason)


def _explaining(save: Callable[..., Any], reason: str) -> Callable[..., Any]:
    @functools.wraps(save)
    def wrapped(self: Any, path: str | None = None, *args: Any, **kwargs: Any) -> Any:
        try:
            return save(self, path, *args, **kwargs)
        except Exception as exc:
            if not (_graveler_path(path) and PARTITIONING_MISMATCH in str(exc)):
                raise
            raise InvalidArgument(
                ".partitionBy() on format('graveler') needs the graveler JVM shim, which "
                f"this Spark session does not have ({getattr(wrapped, _WRAPPED)}); without "
                "the shim, .option('partitionBy', 'col1,col2') partitions the same way"
            ) from exc

    setattr(wrapped, _WRAPPED, reason)
    return wrapped


def _graveler_path(path: object) -> bool:
    return isinstance(path, str) and path.startswith(_SCHEMES)
