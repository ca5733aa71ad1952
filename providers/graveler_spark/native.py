"""Spark's own readers and writers on graveler refs, for local storage namespaces.

    write_native(df, "graveler://lake/etl-42/exports/daily", format="csv",
                 options={"header": "true"}, partition_by=["day"])
    df = read_native(spark, "graveler://lake/v1/exports/daily", format="csv")

Spark writes into ``data/<jj>/<job-id>/`` of the repository's (local) storage namespace, so the
files already sit where graveler keeps objects. Every produced file except Spark's markers
(``_SUCCESS``, ``*.crc``, names starting with ``_`` or ``.``) is then linked under the target
prefix, keeping its relative path (``day=2024-01-01/part-...csv``), in one transaction. If the
Spark job or the staging fails, the scratch directory is removed and nothing is staged.

``read_native`` resolves and lists the ref once on the driver (a tag or commit pins the files,
which are write-once) and hands the physical paths to Spark's reader: Spark's vectorized
Parquet reader at full speed, but no partition discovery from the logical directory names.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from graveler import Graveler, ObjectEntry
from graveler.errors import InvalidArgument, ObjectNotFound, ProtectedBranch
from graveler_spark.commit import commit_if_asked, stage_files
from graveler_spark.job import new_job_id, scratch_prefix
from graveler_spark.options import Target, parse_target
from graveler_spark.snapshot import snapshot_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from graveler import Repository
    from graveler.objectstore import ObjectStore

MODES = ("append", "overwrite")


def write_native(
    df: DataFrame,
    uri: str,
    *,
    format: str = "parquet",
    mode: str = "append",
    options: Mapping[str, str] | None = None,
    partition_by: Sequence[str] = (),
    commit_message: str | None = None,
    commit_metadata: Mapping[str, str] | None = None,
    client: Graveler | None = None,
) -> list[ObjectEntry]:
    """Write ``df`` with Spark's own ``format`` writer and stage the files under ``uri``
    (``graveler://repo/branch/prefix``); returns the staged entries."""

    def run(directory: str) -> None:
        writer = df.write.format(format).options(**dict(options or {})).mode("errorifexists")
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.save(directory)

    return native_write(
        uri,
        run,
        mode=mode,
        commit_message=commit_message,
        commit_metadata=commit_metadata,
        client=client,
    )


def native_write(
    uri: str,
    write: Callable[[str], None],
    *,
    mode: str = "append",
    commit_message: str | None = None,
    commit_metadata: Mapping[str, str] | None = None,
    client: Graveler | None = None,
) -> list[ObjectEntry]:
    """Call ``write(directory)`` (any code that writes files there, usually a Spark writer),
    then stage the files under ``uri`` in one transaction. ``mode="overwrite"`` also removes
    every other object under the prefix in that transaction. ``client`` defaults to a
    :class:`graveler.Graveler` configured from the environment."""
    if mode not in MODES:
        raise InvalidArgument(f"mode must be one of {MODES}, got {mode!r}")
    target = parse_target({"path": uri})
    if mode == "overwrite" and not target.path:
        raise InvalidArgument(f"overwrite needs a path prefix to replace ({uri} is a branch)")
    gv = client or Graveler()
    try:
        repo = gv.repository(target.repository)
        if repo.branch(target.ref).protected:
            raise ProtectedBranch(f"branch {target.ref!r} is protected: write elsewhere, merge")
        entries = _write_and_stage(repo, target, write, mode == "overwrite")
        commit_if_asked(repo, target.ref, commit_message, commit_metadata)
        return entries
    finally:
        if client is None:
            gv.close()


def _write_and_stage(
    repo: Repository, target: Target, write: Callable[[str], None], overwrite: bool
) -> list[ObjectEntry]:
    """Run ``write`` into a fresh scratch directory and stage what it produced; on any
    failure remove the directory, so nothing is left and nothing is staged."""
    scratch = scratch_prefix(new_job_id()).rstrip("/")
    directory = _local_path(repo.store, scratch, target.uri)
    try:
        write(directory)
        entries = [
            repo.make_linked_entry(target.key(rel), f"{scratch}/{rel}")
            for rel in produced_files(directory)
        ]
        stage_files(repo, target.ref, target.path, entries, overwrite)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    _remove_markers(directory)
    return entries


def read_native(
    spark: SparkSession,
    uri: str,
    *,
    format: str = "parquet",
    options: Mapping[str, str] | None = None,
    client: Graveler | None = None,
) -> DataFrame:
    """The objects at ``uri`` (``graveler://repo/ref/path``, an object or a prefix) read by
    Spark's ``format`` reader from their physical files. Raises ObjectNotFound when there are
    none, InvalidArgument for a namespace that is not local."""
    target = parse_target({"path": uri})
    gv = client or Graveler()
    try:
        repo = gv.repository(target.repository)
        files = snapshot_of(repo, target).files
        paths = [_local_path(repo.store, f.address, uri) for f in files]
    finally:
        if client is None:
            gv.close()
    if not paths:
        raise ObjectNotFound(f"no objects at {uri}")
    return spark.read.format(format).options(**dict(options or {})).load(paths)


def produced_files(directory: str) -> Iterator[str]:
    """Relative paths of the data files under ``directory``, sorted, without Spark's markers."""
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not _marker(d)]
        rel_root = os.path.relpath(root, directory)
        for name in files:
            if not _marker(name):
                found.append(name if rel_root == "." else f"{rel_root}/{name}")
    return iter(sorted(found))


def _marker(name: str) -> bool:
    return name.startswith(("_", ".")) or name.endswith(".crc")


def _remove_markers(directory: str) -> None:
    """Delete what was not linked (``_SUCCESS``, ``.crc``): nothing references it."""
    for root, dirs, files in os.walk(directory, topdown=False):
        for name in files:
            if _marker(name) or _marker(os.path.basename(root)):
                os.unlink(os.path.join(root, name))
        for name in dirs:
            path = os.path.join(root, name)
            if not os.listdir(path):
                os.rmdir(path)


def _local_path(store: ObjectStore, key: str, uri: str) -> str:
    path = store.local_path(key)
    if path is None:
        raise InvalidArgument(
            f"native Spark readers and writers need a local storage namespace; {uri} is "
            f"stored at {store.uri}: use format('graveler') instead"
        )
    return path
