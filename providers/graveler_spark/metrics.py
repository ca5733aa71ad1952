"""What Spark itself says one of its file writes produced, read back on the driver.

Spark's own writers report per task how many files they wrote; the driver sums them into the
"number of written files" metric of the SQL execution. :func:`files_written` reads that figure
so that ``write_native`` can compare it with what the driver sees in the namespace. It uses
classic PySpark's JVM view of the SQL status store; where that is not available (Spark
Connect, a Spark that changed it) it returns ``None`` and the caller checks less.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DESCRIPTION = "spark.job.description"
WRITTEN_FILES = "number of written files"
#: How long to wait for Spark's listener to record the end of the write (seconds).
SETTLE_SECONDS = 10.0
_RECENT = 16  # executions searched, newest first


@contextlib.contextmanager
def described(spark: SparkSession, description: str) -> Iterator[None]:
    """Run the block's Spark work under ``description`` (restoring the previous one)."""
    context = getattr(spark, "_sc", None)
    if context is None:  # Spark Connect: no local properties from here
        yield
        return
    previous = context.getLocalProperty(DESCRIPTION)
    context.setLocalProperty(DESCRIPTION, description)
    try:
        yield
    finally:
        context.setLocalProperty(DESCRIPTION, previous)


def files_written(spark: SparkSession, description: str) -> int | None:
    """Spark's count of files written by the finished SQL execution run under
    ``description`` (see :func:`described`), or ``None`` when it cannot be read."""
    try:
        store = spark._jsparkSession.sharedState().statusStore()
    except Exception:
        return None
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        try:
            done, count = _written(store, description)
        except Exception:  # py4j or a changed Spark API: unknown, not an error
            return None
        if done or time.monotonic() > deadline:
            return count
        time.sleep(0.05)


def _written(store: Any, description: str) -> tuple[bool, int | None]:
    """(whether the execution is recorded as finished, its count of written files)."""
    total = int(store.executionsCount())
    start = max(0, total - _RECENT)
    recent = store.executionsList(start, total - start)
    for index in range(recent.size() - 1, -1, -1):
        execution = recent.apply(index)
        if execution.description() != description:
            continue
        if not execution.completionTime().isDefined():
            return False, None
        return True, _count(store, execution)
    return False, None


def _count(store: Any, execution: Any) -> int | None:
    """The execution's count of written files. An adaptive plan lists the metric once per
    plan version and only some carry a value: the largest counts (0 if none has one)."""
    values = store.executionMetrics(execution.executionId())
    metrics = execution.metrics()
    found: int | None = None
    for i in range(metrics.size()):
        metric = metrics.apply(i)
        if metric.name() == WRITTEN_FILES:
            value = values.get(metric.accumulatorId())
            text = str(value.get()) if value.isDefined() else "0"
            found = max(found or 0, int(text.replace(",", "")))
    return found
