"""Spark's own readers and writers on graveler refs, for local storage namespaces.

    write_native(df, "graveler://lake/etl-42/exports/daily", format="csv",
                 options={"header": "true"}, partition_by=["day"])
    df = read_native(spark, "graveler://lake/v1/exports/daily", format="csv")

Spark writes into ``data/<jj>/<job-id>/`` of the repository's (local) storage namespace, so the
files already sit where graveler keeps objects. Every produced file except Spark's own markers
(``_SUCCESS``, ``*.crc``, hidden names) is then linked under the target prefix, keeping its
relative path (``day=2024-01-01/part-...csv``, ``_delta_log/00000000000000000000.json``), in one
transaction, with the table markers and removals of :mod:`graveler_spark.tables`. If the
Spark job or the staging fails, the scratch directory is removed and nothing is staged.

Before staging, the driver compares what it sees with what Spark says its tasks wrote (see
:mod:`graveler_spark.metrics`): a write that produced no file the driver can see, or fewer
than Spark counted, is an error (a ``file://`` namespace on disks the executors do not share),
never an empty success. Every path handed to Spark is a ``file://`` URI, so ``fs.defaultFS``
cannot send it elsewhere.

``read_native`` resolves and lists the ref once on the driver (a tag or commit pins the files,
which are write-once) and hands the physical paths to Spark's reader, one load per partition
with the partition values added as typed literals (so a filter on them prunes whole loads).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import reduce
from typing import TYPE_CHECKING

from graveler import Graveler, ObjectEntry
from graveler.errors import InvalidArgument, ObjectNotFound
from graveler.objectstore import stored_sha256
from graveler_spark.commit import commit_if_asked
from graveler_spark.job import new_job_id, scratch_prefix
from graveler_spark.metrics import described, files_written
from graveler_spark.options import Target, parse_target
from graveler_spark.settings import spark_settings
from graveler_spark.snapshot import Snapshot, snapshot_of
from graveler_spark.storage import SHARED_FILESYSTEM, NamespaceNotShared
from graveler_spark.tables import TableWrite, stage_table_write

SPARK_MARKERS = frozenset({"_SUCCESS", "_temporary"})
HASH_THREADS = 4  # files hashed at once when staging

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from graveler import Repository
    from graveler.objectstore import ObjectStore

MODES = ("append", "overwrite")
OVERWRITE_SETTING = "spark.sql.sources.partitionOverwriteMode"


def write_native(
    df: DataFrame,
    uri: str,
    *,
    format: str = "parquet",
    mode: str = "append",
    options: Mapping[str, str] | None = None,
    partition_by: Sequence[str] = (),
    partition_overwrite_mode: str | None = None,
    commit_message: str | None = None,
    commit_metadata: Mapping[str, str] | None = None,
    client: Graveler | None = None,
) -> list[ObjectEntry]:
    """Write ``df`` with Spark's own ``format`` writer and stage the files under ``uri``
    (``graveler://repo/branch/prefix``); returns the staged entries. ``partition_by`` writes
    Hive-style directories; with ``mode="overwrite"``, ``partition_overwrite_mode="dynamic"``
    (default: the option ``partitionOverwriteMode``, else the session's
    ``spark.sql.sources.partitionOverwriteMode``) replaces only the partitions written.
    ``client`` defaults to one configured from Spark's S3A keys over the driver's environment.
    Raises NamespaceNotShared when the driver does not see every file Spark wrote."""
    spark = df.sparkSession
    opts = dict(options or {})
    dynamic_mode = (
        partition_overwrite_mode
        or opts.pop("partitionOverwriteMode", None)
        or spark.conf.get(OVERWRITE_SETTING, "static")
    )

    def run(directory: str) -> int | None:
        writer = df.write.format(format).options(**opts).mode("errorifexists")
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        description = f"graveler write_native {directory}"
        with described(spark, description):
            writer.save(spark_path(directory))
        return files_written(spark, description)

    gv = client or Graveler(settings=spark_settings(spark))
    try:
        return native_write(
            uri,
            run,
            mode=mode,
            partitioned=bool(partition_by),
            dynamic=str(dynamic_mode).lower() == "dynamic",
            commit_message=commit_message,
            commit_metadata=commit_metadata,
            client=gv,
        )
    finally:
        if client is None:
            gv.close()


def spark_path(path: str) -> str:
    """``path`` (absolute, local) as the fully qualified URI Spark's readers and writers get,
    so ``fs.defaultFS`` has no say (``/a b/c`` -> ``file:///a b/c``, as Hadoop parses it)."""
    if not os.path.isabs(path):
        raise InvalidArgument(f"expected an absolute local path, got {path!r}")
    return "file://" + path


def native_write(
    uri: str,
    write: Callable[[str], int | None],
    *,
    mode: str = "append",
    partitioned: bool = False,
    dynamic: bool = False,
    commit_message: str | None = None,
    commit_metadata: Mapping[str, str] | None = None,
    client: Graveler | None = None,
) -> list[ObjectEntry]:
    """Call ``write(directory)`` (any code that writes files into that local directory;
    hand Spark ``spark_path(directory)``), then stage the files under ``uri`` in one
    transaction. ``write`` may return how many data files it wrote; the driver then checks
    it sees that many. Writing nothing the driver can see raises NamespaceNotShared.
    ``mode="overwrite"`` also removes
    every other object under the prefix in that transaction (only under the partition
    directories written, with ``partitioned`` and ``dynamic``), and stages the table markers
    of :mod:`graveler_spark.tables`. Symlinks in the directory (a :func:`local_view` of what
    is there already) are not staged. ``client`` defaults to a :class:`graveler.Graveler`
    configured from the environment."""
    if mode not in MODES:
        raise InvalidArgument(f"mode must be one of {MODES}, got {mode!r}")
    target = parse_target({"path": uri})
    if mode == "overwrite" and not target.path:
        raise InvalidArgument(f"overwrite needs a path prefix to replace ({uri} is a branch)")
    gv = client or Graveler()
    try:
        repo = gv.repository(target.repository)
        repo.writable_branch(target.ref)  # refused before Spark does any work
        job_id = new_job_id()
        table = TableWrite(
            target.ref, target.path, job_id, mode == "overwrite", dynamic, partitioned
        )
        entries = _write_and_stage(repo, target, write, table)
        commit_if_asked(repo, target.ref, commit_message, commit_metadata)
        return entries
    finally:
        if client is None:
            gv.close()


def _write_and_stage(
    repo: Repository, target: Target, write: Callable[[str], int | None], table: TableWrite
) -> list[ObjectEntry]:
    """Run ``write`` into a fresh scratch directory and stage what it produced; on any
    failure remove the directory, so nothing is left and nothing is staged."""
    directory = scratch_directory(repo, target, table.job_id)
    try:
        reported = write(directory)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return stage_directory(repo, target, table, reported)


def scratch_directory(repo: Repository, target: Target, job_id: str) -> str:
    """The local directory a native write of job ``job_id`` writes into (the namespace's
    ``data/<jj>/<job-id>``); raises InvalidArgument for a namespace that is not local."""
    return _local_path(repo.store, scratch_prefix(job_id).rstrip("/"), target.uri)


def stage_directory(
    repo: Repository,
    target: Target,
    table: TableWrite,
    reported: int | None,
    *,
    rename: Callable[[str], str] | None = None,
    content_type: str | None = None,
) -> list[ObjectEntry]:
    """Stage the files a finished write left in the scratch directory of ``table.job_id``
    under ``target``, in one transaction (:func:`stage_table_write`), each at its relative
    path (passed through ``rename`` when given) with ``table.metadata`` as user metadata.
    ``reported`` is the writer's own count of data files (None: unknown); the driver must
    see that many, and at least one unless the count is 0, else NamespaceNotShared. On any
    failure the directory is removed and nothing is staged; after staging, what was not
    linked is deleted."""
    scratch = scratch_prefix(table.job_id).rstrip("/")
    directory = scratch_directory(repo, target, table.job_id)
    try:
        produced = list(produced_files(directory))
        _check_produced(directory, produced, reported)
        keys = [f"{scratch}/{rel}" for rel in produced]
        entries = [
            repo.make_linked_entry(
                target.key(rename(rel) if rename else rel),
                key,
                checksum=checksum,
                metadata=dict(table.metadata),
                content_type=content_type,
            )
            for rel, key, checksum in zip(produced, keys, _checksums(repo.store, keys), strict=True)
        ]
        stage_table_write(repo, table, entries)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    _remove_unlinked(directory)
    return entries


def _checksums(store: ObjectStore, keys: Sequence[str]) -> list[str]:
    """The SHA-256 of each object, hashed in threads (hashlib releases the GIL on large
    buffers, so the files of a job are hashed side by side)."""
    if len(keys) < 2:
        return [stored_sha256(store, k) for k in keys]
    with ThreadPoolExecutor(max_workers=min(HASH_THREADS, len(keys))) as pool:
        return list(pool.map(lambda k: stored_sha256(store, k), keys))


def _check_produced(directory: str, produced: list[str], reported: int | None) -> None:
    """Raise NamespaceNotShared unless the driver sees the files the write produced."""
    where = spark_path(directory)
    if reported is not None and reported != len(produced):
        raise NamespaceNotShared(
            f"Spark wrote {reported} data file(s) but the driver sees {len(produced)} in "
            f"{where}; nothing was staged: {SHARED_FILESYSTEM}"
        )
    if not produced and reported != 0:  # 0: the writer says it wrote nothing
        raise NamespaceNotShared(
            f"the write finished but the driver sees no data file in {where}, so nothing "
            f"was staged (a Spark write always produces at least one): {SHARED_FILESYSTEM}"
        )


def read_native(
    spark: SparkSession,
    uri: str,
    *,
    format: str = "parquet",
    options: Mapping[str, str] | None = None,
    client: Graveler | None = None,
) -> DataFrame:
    """The objects at ``uri`` (``graveler://repo/ref/path``, an object or a prefix) read by
    Spark's ``format`` reader from their physical files, with the partition columns
    discovered from the logical keys (below the option ``basePath`` when given), typed as
    Spark infers them (files handed over as ``file://`` URIs). Raises ObjectNotFound when
    there are none, InvalidArgument for a namespace that is not local. ``client`` defaults to
    one configured from Spark's S3A keys over the environment."""
    opts = dict(options or {})
    base = opts.pop("basePath", None)
    target = parse_target({"path": uri})
    gv = client or Graveler(settings=spark_settings(spark))
    try:
        repo = gv.repository(target.repository)
        snapshot = snapshot_of(repo, target, base)
        groups: dict[tuple[object, ...], list[str]] = {}
        for f in snapshot.files:
            path = spark_path(_local_path(repo.store, f.address, uri))
            groups.setdefault(f.values, []).append(path)
    finally:
        if client is None:
            gv.close()
    if not groups:
        raise ObjectNotFound(f"no objects at {uri}")
    reader = spark.read.format(format).options(**opts)
    frames = [
        _with_partition_values(reader.load(paths), snapshot, values)
        for values, paths in groups.items()
    ]
    return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)


def _with_partition_values(
    df: DataFrame, snapshot: Snapshot, values: tuple[object, ...]
) -> DataFrame:
    """``df`` (the files of one partition) with the partition columns as typed literals."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_type

    for name, value, kind in zip(
        snapshot.partition_columns, values, snapshot.partition_types, strict=True
    ):
        df = df.withColumn(name, F.lit(value).cast(from_arrow_type(kind)))
    return df


def local_view(repo: Repository, ref: str, prefix: str, directory: str) -> int:
    """Lay the objects under ``prefix`` at ``ref`` out in ``directory`` as symlinks to their
    physical files (local namespaces), keeping their relative paths; returns how many. Tools
    that read or extend a table in place (``deltalake`` appending to ``_delta_log/``) work on
    the view; :func:`native_write` does not stage the symlinks back."""
    resolved = repo.resolve(ref)
    pinned = ref if resolved.branch is not None else resolved.commit.id
    under = f"{prefix.strip('/')}/" if prefix.strip("/") else ""
    count = 0
    for e in repo.iter_objects(pinned, under):
        link = os.path.join(directory, e.path[len(under) :])
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(_local_path(repo.store, e.physical_address, e.path), link)
        count += 1
    return count


def produced_files(directory: str) -> Iterator[str]:
    """Relative paths of the data files under ``directory``, sorted: every regular file
    except Spark's own markers (``_SUCCESS``, ``*.crc``, hidden names, ``_temporary/``).
    Other names starting with ``_`` are data (a Delta table's ``_delta_log/``)."""
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not _marker(d)]
        rel_root = os.path.relpath(root, directory)
        for name in files:
            if not _marker(name) and not os.path.islink(os.path.join(root, name)):
                found.append(name if rel_root == "." else f"{rel_root}/{name}")
    return iter(sorted(found))


def _marker(name: str) -> bool:
    """Spark's marker files and directories (never data)."""
    return (
        name.startswith(".")
        or name.endswith(".crc")
        or name in SPARK_MARKERS
        or name.startswith(("_committed_", "_started_"))
    )


def _remove_unlinked(directory: str) -> None:
    """Delete what was not linked (``_SUCCESS``, ``.crc``, a view's symlinks): nothing
    references it."""
    for root, dirs, files in os.walk(directory, topdown=False):
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path) or _marker(name) or _marker(os.path.basename(root)):
                os.unlink(path)
        for name in dirs:
            path = os.path.join(root, name)
            if os.path.islink(path):
                os.unlink(path)
            elif not os.listdir(path):
                os.rmdir(path)


def _local_path(store: ObjectStore, key: str, uri: str) -> str:
    path = store.local_path(key)
    if path is None:
        raise InvalidArgument(
            f"native Spark readers and writers need a local storage namespace; {uri} is "
            f"stored at {store.uri}: use format('graveler') instead"
        )
    return path
