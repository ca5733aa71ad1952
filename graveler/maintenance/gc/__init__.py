"""Garbage collection: delete object bytes that no retained commit and no staged entry needs.

* :mod:`graveler.maintenance.gc.rules` -- retention rules per branch and the commits they retain;
* :mod:`graveler.maintenance.gc.mark` -- reading tree files straight from the namespace
(executor-safe);
* :mod:`graveler.maintenance.gc.plan` -- the shared plan and the one definition of garbage;
* :mod:`graveler.maintenance.gc.collect` -- the single-process implementation;
* :mod:`graveler.maintenance.gc.ledger` -- the record of expired commits that fsck reads;
* :mod:`graveler.maintenance.gc.uploads` -- multipart uploads left unfinished, and their parts.

The Spark implementation lives in the ``graveler_spark`` provider (``graveler gc --spark``).
The names below are the public GC API, building blocks included, so that a distributed
collector can share the plan, the marking readers and the one definition of garbage.
"""

from graveler.maintenance.gc.collect import collect_garbage, list_collectable, report
from graveler.maintenance.gc.ledger import EXPIRED_PREFIX, expired_commits, record_expired
from graveler.maintenance.gc.mark import metarange_range_ids, range_addresses
from graveler.maintenance.gc.plan import (
    DEFAULT_GRACE,
    GCPlan,
    GCReport,
    Marks,
    Progress,
    is_garbage,
    no_progress,
    prepare,
)
from graveler.maintenance.gc.rules import DEFAULT_RETENTION_DAYS, RetentionRules, retained_commits
from graveler.maintenance.gc.uploads import clean_uploads
from graveler.storage.committed.files import TREE_PREFIX

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
