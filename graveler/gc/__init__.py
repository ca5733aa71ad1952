"""Garbage collection: delete object bytes that no retained commit and no staged entry needs.

* :mod:`graveler.gc.rules` -- retention rules per branch and the commits they retain;
* :mod:`graveler.gc.mark` -- reading tree files straight from the namespace (executor-safe);
* :mod:`graveler.gc.plan` -- the shared plan and the one definition of garbage;
* :mod:`graveler.gc.collect` -- the single-process implementation.

The Spark implementation lives in the ``graveler_spark`` provider (``graveler gc --spark``).
"""

from graveler.gc.collect import collect_garbage
from graveler.gc.plan import DEFAULT_GRACE, GCPlan, GCReport, Marks, is_garbage, prepare
from graveler.gc.rules import DEFAULT_RETENTION_DAYS, RetentionRules, retained_commits

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_RETENTION_DAYS",
    "GCPlan",
    "GCReport",
    "Marks",
    "RetentionRules",
    "collect_garbage",
    "is_garbage",
    "prepare",
    "retained_commits",
]
