"""Driver side of a write job: stage every file in one transaction, or delete them all.

A task's report is a claim, not a fact: ``commit_job`` first lists the job's prefix (once)
and checks that every reported file is there with the reported size, as the driver sees it.
Where it is
not (a ``file://`` namespace on disks the executors do not share), it raises
:class:`~graveler_spark.storage.NamespaceNotShared`, stages nothing and deletes what it can
see. It then stages the files as one ``stage_entries`` call (one SQL transaction). In
``overwrite`` mode the same call also removes every object that was visible under the target
prefix and is not rewritten. If staging fails, the job's files are deleted and the error
propagates: nothing is staged, nothing is left. Files of failed task attempts (under the
job's prefix but in no message, seen in that listing) are deleted. Option
``commit_message`` then commits the branch; a commit failure leaves the entries staged (they
are the user's data).

``abort_job`` deletes every file under the job's prefix, including files a task was still
writing when the job failed: it lists the prefix again until it stays empty for a moment.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from graveler import ObjectEntry, shared_client
from graveler.errors import NoChanges
from graveler_spark.job import WriteJob, WrittenFile
from graveler_spark.storage import SHARED_FILESYSTEM, NamespaceNotShared, store_for
from graveler_spark.tables import stage_table_write

if TYPE_CHECKING:
    from graveler import Repository
    from graveler.objectstore import ObjectInfo, ObjectStore

#: How long ``abort_job`` waits for stray files of cancelled tasks (seconds).
ABORT_SETTLE_SECONDS = 3.0
ABORT_POLL_SECONDS = 0.25


def commit_job(job: WriteJob, files: Sequence[WrittenFile]) -> None:
    """Stage (and optionally commit) what the tasks wrote; see the module docstring."""
    store = store_for(job.namespace, job.settings.store_options)
    gv = shared_client(job.settings)  # one per process and settings
    repo = gv.repository(job.target.repository)
    try:
        seen = verify_written(store, job.scratch_prefix, files)
        entries = [_entry(f, job.object_metadata) for f in files]
        stage_table_write(repo, job.table_write(), entries)
    except BaseException:
        delete_job_files(store, job.scratch_prefix, files)
        raise
    delete_strays(store, seen, files)
    commit_if_asked(repo, job.target.ref, job.commit_message, job.commit_metadata)


def verify_written(store: ObjectStore, prefix: str, files: Sequence[WrittenFile]) -> set[str]:
    """Every key under ``prefix`` (one listing); raises NamespaceNotShared unless each file in
    ``files`` is among them with the size its task reported, as this process sees them."""
    seen = {info.key: info.size for info in store.list(prefix)}
    wrong = [f for f in files if seen.get(f.address) != f.size]
    if not wrong:
        return set(seen)
    first = wrong[0]
    found = seen.get(first.address)
    raise NamespaceNotShared(
        f"{len(wrong)} of {len(files)} file(s) the Spark tasks reported are not in "
        f"{store.uri} as the driver sees it (e.g. {first.address}: {first.size} bytes "
        f"reported, {'none' if found is None else f'{found} bytes'} found); nothing was "
        f"staged: {SHARED_FILESYSTEM}"
    )


def commit_if_asked(
    repo: Repository, branch: str, message: str | None, metadata: Mapping[str, str] | None
) -> None:
    """Commit ``branch`` when a message is given; identical rewrites (no change) are fine."""
    if message:
        with contextlib.suppress(NoChanges):
            repo.commit(branch, message, metadata=metadata)


def abort_job(job: WriteJob, files: Sequence[WrittenFile]) -> None:
    """Delete every file of the job; stage nothing."""
    store = store_for(job.namespace, job.settings.store_options)
    delete_job_files(store, job.scratch_prefix, files)
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < ABORT_SETTLE_SECONDS:
        time.sleep(ABORT_POLL_SECONDS)
        if _delete_all(store, store.list(job.scratch_prefix)):
            quiet_since = time.monotonic()


def delete_job_files(store: ObjectStore, prefix: str, files: Iterable[WrittenFile]) -> None:
    """Delete ``files`` and whatever else is under the job's ``prefix``."""
    for f in files:
        store.delete(f.address)
    _delete_all(store, store.list(prefix))


def delete_strays(store: ObjectStore, seen: Iterable[str], files: Sequence[WrittenFile]) -> None:
    """Delete the keys ``verify_written`` saw that no reported file is (files of failed task
    attempts, the driver's marker): nothing references them."""
    keep = {f.address for f in files}
    for key in seen:
        if key not in keep:
            store.delete(key)


def _delete_all(store: ObjectStore, infos: Iterable[ObjectInfo]) -> int:
    keys = [i.key for i in infos]
    for key in keys:
        store.delete(key)
    return len(keys)


def _entry(f: WrittenFile, metadata: Mapping[str, str]) -> ObjectEntry:
    return ObjectEntry(
        path=f.path,
        physical_address=f.address,
        size=f.size,
        checksum=f.checksum,
        mtime=f.mtime,
        content_type=f.content_type,
        metadata=dict(metadata),
    )
