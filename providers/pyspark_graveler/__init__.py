"""Automatic registration of the ``graveler`` Spark data source.

PySpark (4.0+) looks, once per Spark application, for installed top-level modules whose name
starts with ``pyspark_`` and registers the ``DefaultSource`` each one exposes under that
class's ``name()``. This module exists only for that lookup; use ``graveler_spark``.
"""

from graveler_spark.datasource import GravelerDataSource as DefaultSource

__all__ = ["DefaultSource"]
