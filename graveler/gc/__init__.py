"""Garbage collection: delete object bytes that no retained commit and no staged entry needs.

* :mod:`graveler.gc.rules` -- retention rules per branch and the commits they retain;
* :mod:`graveler.gc.mark` -- reading tree files straight from the namespace (executor-safe);
* :mod:`graveler.gc.plan` -- the shared plan and the one definition of garbage;
* :mod:`graveler.gc.collect` -- the single-process implementation;
* :mod:`graveler.gc.ledger` -- the record of expired commits that fsck reads;
* :mod:`graveler.gc.uploads` -- multipart uploads left unfinished, and their parts.

The Spark implementation lives in the ``graveler_spark`` provider (``graveler gc --spark``).
The names below are the public GC API, building blocks included, so that a distributed
collector can share the plan, the marking readers and the one definition of garbage.
"""

from graveler.committed.files import TREE_PREFIX
from graveler.gc.collect import collect_garbage, list_collectable, report
from graveler.gc.ledger import EXPIRED_PREFIX, expired_commits, record_expired
from graveler.gc.mark import metarange_range_ids, range_addresses
from graveler.gc.plan import (
    DEFAULT_GRACE,
    GCPlan,
    GCReport,
    Marks,
    Progress,
    is_garbage,
    no_progress,
    prepare,
)
from graveler.gc.rules import DEFAULT_RETENTION_DAYS, RetentionRules, retained_commits
from graveler.gc.uploads import clean_uploads

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_RETENTION_DAYS",
    "EXPIRED_PREFIX",
    "TREE_PREFIX",
    "GCPlan",
    "GCReport",
    "Marks",
    "Progress",
    "RetentionRules",
    "clean_uploads",
    "collect_garbage",
    "expired_commits",
    "is_garbage",
    "list_collectable",
    "metarange_range_ids",
    "no_progress",
    "prepare",
    "range_addresses",
    "record_expired",
    "report",
    "retained_commits",
]
