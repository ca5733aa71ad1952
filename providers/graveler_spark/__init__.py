"""graveler_spark: Spark as a first-class way into and out of graveler branches.

* ``spark.read.format("graveler").load("graveler://repo/ref/prefix")`` and
  ``df.write.format("graveler").mode("append" | "overwrite").save("graveler://repo/branch/prefix")``
  (:class:`GravelerDataSource`; one stage -- and optionally one commit -- per job): partitioned
  tables, pushdown, dynamic overwrite, CSV / JSON, streaming (``docs/spark.md``);
* :func:`write_native` / :func:`native_write`: run any Spark writer (csv, json, parquet...)
  into a local namespace and link the files it produced in one transaction;
  :func:`read_native`: Spark's own reader over a ref's physical files;
* :func:`collect_garbage_spark`: garbage collection whose executors read range files;
* :func:`spark_session`: a session whose Python workers can run all of the above.

Settings (store endpoint, credentials...) are resolved once on the driver and sent to every
executor with the job: :mod:`graveler_spark.settings`. ``docs/spark-cluster.md`` covers
clusters.

Registration: installing the package makes the format available to every Spark session, through
PySpark's static lookup of top-level ``pyspark_*`` modules exposing ``DefaultSource`` (our
``pyspark_graveler``). :func:`register` registers explicitly, can bind connection defaults,
and turns filter pushdown on; the JVM shim (:func:`shim_jar`, :func:`load_shim`) makes
``.partitionBy()`` work and reads Parquet with Spark's own scan over the files the data source
planned (:mod:`graveler_spark.plan`; option ``nativeReads=false`` keeps the Python reader).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from graveler.extras import require_extra

require_extra("spark", package=__name__)

from graveler_spark.options import FORMAT_NAME  # noqa: E402
from graveler_spark.registration import (  # noqa: E402
    PUSHDOWN_SETTING,
    activate,
    load_shim,
    register,
    shim_jar,
)

if TYPE_CHECKING:
    from graveler_spark.datasource import GravelerDataSource
    from graveler_spark.gc import collect_garbage_spark
    from graveler_spark.native import native_write, read_native, write_native
    from graveler_spark.session import spark_session
    from graveler_spark.storage import NamespaceNotShared

_EXPORTS = {
    "GravelerDataSource": "graveler_spark.datasource",
    "collect_garbage_spark": "graveler_spark.gc",
    "native_write": "graveler_spark.native",
    "read_native": "graveler_spark.native",
    "write_native": "graveler_spark.native",
    "spark_session": "graveler_spark.session",
    "NamespaceNotShared": "graveler_spark.storage",
}

__all__ = [
    "FORMAT_NAME",
    "PUSHDOWN_SETTING",
    "GravelerDataSource",
    "NamespaceNotShared",
    "activate",
    "collect_garbage_spark",
    "load_shim",
    "native_write",
    "read_native",
    "register",
    "shim_jar",
    "spark_session",
    "write_native",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'graveler_spark' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
