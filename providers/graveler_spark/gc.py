"""Garbage collection as a Spark job: executors read metarange and range files directly.

The driver prepares the same :class:`graveler.gc.GCPlan` as the single-process collector
(retained commits, staged addresses, cutoff). Then:

1. executors read every commit's metarange (``graveler.gc.mark.metarange_range_ids``);
2. executors read every range of a retained metarange and emit its physical addresses
   (``graveler.gc.mark.range_addresses``: :class:`graveler.storage.sstable.SstReader` plus record
   decoding, verified against the file's content address);
3. the namespace listing (``data/`` and ``_graveler/``) is anti-joined with those marks in
   Spark, applying :func:`graveler.gc.is_garbage`'s rules as DataFrame expressions;
4. unless it is a dry run, executors delete the selected objects.

It selects exactly what :func:`graveler.gc.collect_garbage` selects (tests hold both to one
model). Namespaces must be reachable from executors: ``file://`` (local mode or a shared
filesystem) or ``s3://``. Executors get the repository's client settings (store endpoint,
region, credentials the driver was given) with their closures, never from their own
environment; with no credentials given they use their own AWS chain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from graveler import DATA_PREFIX
from graveler.errors import InvalidArgument
from graveler.gc import (
    DEFAULT_GRACE,
    TREE_PREFIX,
    GCPlan,
    GCReport,
    Progress,
    RetentionRules,
    clean_uploads,
    list_collectable,
    metarange_range_ids,
    no_progress,
    prepare,
    range_addresses,
    record_expired,
    report,
)
from graveler.objectstore import ObjectInfo
from graveler_spark.storage import store_for

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from graveler import Repository

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TREE_KEY = r"^_graveler/[0-9a-f]{64}$"


def collect_garbage_spark(
    spark: SparkSession,
    repo: Repository,
    rules: RetentionRules | None = None,
    *,
    grace: timedelta = DEFAULT_GRACE,
    dry_run: bool = False,
    now: datetime | None = None,
    progress: Progress = no_progress,
) -> GCReport:
    """Like :func:`graveler.gc.collect_garbage`, with marking, selection and deletion on
    Spark. Raises InvalidArgument for a ``mem://`` namespace (executors cannot see it)."""
    if repo.info.storage_namespace.startswith("mem://"):
        raise InvalidArgument("Spark garbage collection needs a file:// or s3:// namespace")
    plan = prepare(repo, rules, grace=grace, now=now)
    options = dict(repo.settings.store_options)
    marks = _mark(spark, plan, options, progress)
    listing = list_collectable(repo.store, progress)
    rows = _select(spark, plan, listing, marks).collect()
    marks.objects.unpersist()
    selected = tuple(sorted((_info(row) for row in rows), key=lambda o: o.key))
    if not dry_run and selected:
        record_expired(repo.store, plan.expired)  # for fsck, before anything goes
        _sweep(spark, plan.namespace, options, [o.key for o in selected])
        progress("sweep", len(selected), len(selected))
    done = _report(plan, marks, listing, selected, dry_run)
    return clean_uploads(repo, done, grace=grace, now=plan.now)


def _report(
    plan: GCPlan,
    marks: _Marks,
    listing: list[ObjectInfo],
    selected: tuple[ObjectInfo, ...],
    dry_run: bool,
) -> GCReport:
    return report(
        plan,
        objects_marked=marks.count,
        tree_files_marked=len(marks.tree_files),
        ranges_read=marks.ranges_read,
        listing=(len(listing), sum(1 for o in listing if o.mtime >= plan.cutoff)),
        selected=selected,
        deleted=0 if dry_run else len(selected),
        dry_run=dry_run,
    )


def collect_garbage_cli(
    repository: str,
    rules: RetentionRules,
    *,
    home: str | None,
    database_url: str | None,
    master: str | None,
    grace: timedelta = DEFAULT_GRACE,
    dry_run: bool = False,
    progress: Progress = no_progress,
) -> GCReport:
    """What ``graveler gc --spark`` runs: a session on ``master`` (else Spark's own
    ``spark.master``, as under ``spark-submit``, else ``local[*]``), then
    :func:`collect_garbage_spark` with a client whose settings are the command's over Spark's
    S3A keys over the environment; the executors get those settings."""
    from graveler import Graveler
    from graveler_spark.session import spark_session
    from graveler_spark.settings import spark_settings

    spark = spark_session(master, app_name="graveler-gc", register=False, log_level="ERROR")
    settings = spark_settings(spark)
    with Graveler(home=home, database_url=database_url, settings=settings) as gv:
        repo = gv.repository(repository)
        return collect_garbage_spark(
            spark, repo, rules, grace=grace, dry_run=dry_run, progress=progress
        )


@dataclass(frozen=True)
class _Marks:
    objects: DataFrame  # reachable addresses, cached, hash-partitioned into ``partitions``
    count: int
    partitions: int
    tree_files: list[str]  # IDs of every tree file some commit references
    ranges_read: int


def _mark(
    spark: SparkSession, plan: GCPlan, options: Mapping[str, str], progress: Progress
) -> _Marks:
    """Executors read the metaranges, then the retained ranges."""
    sc = spark.sparkContext
    namespace = plan.namespace
    metaranges = sorted(plan.all_metaranges)

    def ranges_of(mid: str) -> list[tuple[str, str]]:
        return [(mid, rid) for rid in metarange_range_ids(store_for(namespace, options), mid)]

    pairs = sc.parallelize(metaranges, _slices(sc, len(metaranges))).flatMap(ranges_of).collect()
    progress("mark-metaranges", len(metaranges), len(metaranges))
    retained = sorted({rid for mid, rid in pairs if mid in plan.retained_metaranges})

    def addresses_of(rid: str) -> list[tuple[str]]:
        return [(a,) for a in range_addresses(store_for(namespace, options), rid)]

    marked = sc.parallelize(retained, _slices(sc, len(retained))).flatMap(addresses_of)
    staged = sc.parallelize([(a,) for a in sorted(plan.staged)], 1)
    parts = _partitions(sc, len(retained))
    objects = spark.createDataFrame(marked.union(staged), "address string")
    objects = objects.repartition(parts, "address").dropDuplicates(["address"]).cache()
    count = objects.count()  # runs the mark job; the cache serves the anti-join
    progress("mark-ranges", len(retained), len(retained))
    files = sorted({m for m in metaranges if m} | {rid for _, rid in pairs})
    return _Marks(objects, count, parts, files, len(retained))


def _select(
    spark: SparkSession,
    plan: GCPlan,
    listing: list[ObjectInfo],
    marks: _Marks,
) -> DataFrame:
    """The listing minus marks, as DataFrame expressions of ``graveler.gc.is_garbage``."""
    from pyspark.sql import functions as F

    rows = [(o.key, o.size, _micros(o.mtime)) for o in listing]
    listed = spark.createDataFrame(rows, "key string, size long, mtime_us long")
    old = listed.where(F.col("mtime_us") < _micros(plan.cutoff))
    data = old.where(F.col("key").startswith(DATA_PREFIX))
    data = data.repartition(marks.partitions, "key")  # co-partitioned with the marks
    data = data.join(marks.objects, data.key == marks.objects.address, "left_anti")
    trees = old.where(F.col("key").rlike(_TREE_KEY))
    trees = trees.withColumn("file_id", F.substring("key", len(TREE_PREFIX) + 1, 64))
    referenced = spark.createDataFrame([(f,) for f in marks.tree_files], "file_id string")
    trees = trees.join(F.broadcast(referenced), "file_id", "left_anti")
    trees = trees.select("key", "size", "mtime_us")
    return data.select("key", "size", "mtime_us").unionByName(trees)


def _sweep(
    spark: SparkSession, namespace: str, options: Mapping[str, str], keys: list[str]
) -> None:
    """Delete ``keys`` on executors."""

    def delete(part: Iterable[str]) -> None:
        store = store_for(namespace, options)
        for key in part:
            store.delete(key)

    sc = spark.sparkContext
    sc.parallelize(keys, _slices(sc, len(keys))).foreachPartition(delete)


def _slices(sc: Any, n: int) -> int:
    parallelism: int = sc.defaultParallelism
    return max(1, min(n, parallelism * 2))


def _partitions(sc: Any, ranges: int) -> int:
    """Partitions of the marked addresses: ~64 ranges (~130k addresses) each, at least 2 per
    core."""
    parallelism: int = sc.defaultParallelism
    return max(2 * parallelism, ranges // 64)


def _micros(when: datetime) -> int:
    """Exact microseconds since the epoch, so comparisons match datetime comparisons."""
    return int((when - _EPOCH) // timedelta(microseconds=1))


def _info(row: Any) -> ObjectInfo:
    return ObjectInfo(row.key, row.size, _EPOCH + timedelta(microseconds=row.mtime_us))
