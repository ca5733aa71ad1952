"""Single-process garbage collection: prepare, mark, list, select, sweep.

>>> report = collect_garbage(repo, RetentionRules(default_days=7), dry_run=True)  # doctest: +SKIP
>>> [o.key for o in report.selected]                                               # doctest: +SKIP

The Spark job in ``graveler_spark.gc`` runs the same plan with executors reading the range
files; both select exactly the same objects (a test holds them to one model).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from graveler.maintenance.gc.ledger import record_expired
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
from graveler.maintenance.gc.rules import RetentionRules
from graveler.maintenance.gc.uploads import clean_uploads
from graveler.storage.committed.files import TREE_PREFIX
from graveler.storage.namespaces import refuse_nested_listing
from graveler.storage.objects import DATA_PREFIX
from graveler.storage.objectstore.port import ObjectInfo, ObjectStore

if TYPE_CHECKING:
    from graveler.repository import Repository

_PROGRESS_EVERY = 256


def collect_garbage(
    repo: Repository,
    rules: RetentionRules | None = None,
    *,
    grace: timedelta = DEFAULT_GRACE,
    dry_run: bool = False,
    now: datetime | None = None,
    progress: Progress = no_progress,
) -> GCReport:
    """Delete (or with ``dry_run`` only report) the repository's garbage; see
    :mod:`graveler.maintenance.gc.plan` for what counts as garbage. Nothing is deleted unless every
    tree file of every commit was read and verified first."""
    plan = prepare(repo, rules, grace=grace, now=now)
    marks = mark(repo.store, plan, progress)
    listing = list_collectable(repo.store, progress)
    done = finish(repo.store, plan, marks, listing, dry_run=dry_run, progress=progress)
    return clean_uploads(repo, done, grace=grace, now=plan.now)


def mark(store: ObjectStore, plan: GCPlan, progress: Progress = no_progress) -> Marks:
    """Read every commit's metarange and every retained commit's ranges."""
    by_metarange: dict[str, list[str]] = {}
    metaranges = sorted(plan.all_metaranges)
    for i, mid in enumerate(metaranges, 1):
        by_metarange[mid] = metarange_range_ids(store, mid)
        _tick(progress, "mark-metaranges", i, len(metaranges))
    retained_ranges = sorted({r for m in plan.retained_metaranges for r in by_metarange[m]})
    objects = set(plan.staged)
    for i, rid in enumerate(retained_ranges, 1):
        objects.update(range_addresses(store, rid))
        _tick(progress, "mark-ranges", i, len(retained_ranges))
    tree_files = {m for m in metaranges if m} | {r for rs in by_metarange.values() for r in rs}
    return Marks(frozenset(objects), frozenset(tree_files), len(retained_ranges))


def list_collectable(store: ObjectStore, progress: Progress = no_progress) -> list[ObjectInfo]:
    """Every object under ``data/`` and ``_graveler/`` (the only prefixes GC may touch).
    NamespaceInUse when another repository's metadata lies under ``data/`` (a namespace
    nested in this one, by a version without ownership checks): nothing is deleted then."""
    found: list[ObjectInfo] = []
    for prefix in (DATA_PREFIX, TREE_PREFIX):
        for info in store.list(prefix):
            if prefix == DATA_PREFIX:
                refuse_nested_listing(store.uri, info.key)
            found.append(info)
            if len(found) % _PROGRESS_EVERY == 0:
                progress("list", len(found), 0)
    progress("list", len(found), len(found))
    return found


def finish(
    store: ObjectStore,
    plan: GCPlan,
    marks: Marks,
    listing: Iterable[ObjectInfo],
    *,
    dry_run: bool,
    progress: Progress = no_progress,
) -> GCReport:
    """Select garbage from ``listing`` and, unless ``dry_run``, delete it."""
    scanned = in_grace = 0
    selected: list[ObjectInfo] = []
    for info in listing:
        scanned += 1
        if info.mtime >= plan.cutoff:
            in_grace += 1
        elif is_garbage(info, marks, plan.cutoff):
            selected.append(info)
    selected.sort(key=lambda o: o.key)
    if not dry_run and selected:
        record_expired(store, plan.expired)  # for fsck, before anything goes
    deleted = 0 if dry_run else sweep(store, [o.key for o in selected], progress)
    return report(
        plan,
        objects_marked=len(marks.objects),
        tree_files_marked=len(marks.tree_files),
        ranges_read=marks.ranges_read,
        listing=(scanned, in_grace),
        selected=selected,
        deleted=deleted,
        dry_run=dry_run,
    )


def sweep(store: ObjectStore, keys: list[str], progress: Progress = no_progress) -> int:
    """Delete ``keys`` (data objects first, tree files last); returns how many."""
    ordered = sorted(keys, key=lambda k: (k.startswith(TREE_PREFIX), k))
    for i, key in enumerate(ordered, 1):
        store.delete(key)
        _tick(progress, "sweep", i, len(ordered))
    return len(ordered)


def report(
    plan: GCPlan,
    *,
    objects_marked: int,
    tree_files_marked: int,
    ranges_read: int,
    listing: tuple[int, int],
    selected: Sequence[ObjectInfo],
    deleted: int,
    dry_run: bool,
) -> GCReport:
    """The report of one collection, whichever implementation ran it. ``listing`` is
    (objects scanned, of which in the grace period)."""
    scanned, in_grace = listing
    return GCReport(
        repository=plan.repository,
        dry_run=dry_run,
        commits_total=plan.commits_total,
        commits_retained=len(plan.retained),
        objects_marked=objects_marked,
        tree_files_marked=tree_files_marked,
        ranges_read=ranges_read,
        scanned=scanned,
        in_grace=in_grace,
        selected=tuple(selected),
        deleted=deleted,
    )


def _tick(progress: Progress, phase: str, done: int, total: int) -> None:
    if done == total or done % _PROGRESS_EVERY == 0:
        progress(phase, done, total)
