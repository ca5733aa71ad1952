"""Uploading many objects at once: bytes written in parallel, all staged in one transaction.

:func:`upload_many` keeps the promise of :func:`graveler.writes.put` (an object's bytes are
durable before its entry is staged) while paying for it once per batch rather than once per
object: ``workers`` threads write objects side by side, each to a fresh address written in
place, so their file fsyncs overlap (the filesystem journals them together); directories
are fsynced once each for the whole batch (``ObjectStore.sync``). Only then are the entries
staged, in one transaction. If anything fails, nothing is staged and the objects already
written are deleted again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import BinaryIO

from graveler import validate
from graveler.context import RepoContext
from graveler.entry import ObjectEntry
from graveler.errors import InvalidArgument
from graveler.writes import delete_stored, stage_stored, store_object

#: Objects written at once by default (threads: the work is I/O and fsync waits).
DEFAULT_WORKERS = 16
#: Local files up to this size are read in one call.
SMALL_FILE = 1 << 20
#: A source: bytes, a binary file object, or the path of a local file (``os.PathLike``).
Source = bytes | BinaryIO | os.PathLike[str]


def upload_many(
    repo: RepoContext,
    branch: str,
    items: Iterable[tuple[str, Source]],
    *,
    metadata: Mapping[str, str] | None = None,
    workers: int = DEFAULT_WORKERS,
    progress: Callable[[ObjectEntry], None] | None = None,
) -> list[ObjectEntry]:
    """Upload every ``(path, source)`` of ``items`` and stage them all in one transaction;
    returns the entries in input order (a path given twice is staged once, the later one
    winning). A source is bytes, a binary file object, or a local file's path as an
    ``os.PathLike`` (``pathlib.Path``). ``progress`` is called with each entry once its
    bytes are stored. Raises InvalidKey / InvalidArgument for a bad path or source (before
    anything is written when it comes first), BranchNotFound, ProtectedBranch, or whatever
    a read or write failed with; then nothing is staged and nothing written is kept."""
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise InvalidArgument(f"workers must be a positive integer, got {workers!r}")
    meta = validate.metadata(metadata)
    stored: dict[int, ObjectEntry] = {}
    try:
        _store_all(repo, items, meta, workers, progress, stored)
    except BaseException:
        delete_stored(repo, stored.values())
        raise
    entries = [stored[i] for i in sorted(stored)]
    try:
        repo.store.sync(e.physical_address for e in entries)
    except BaseException:
        delete_stored(repo, entries)
        raise
    stage_stored(repo, branch, entries)
    return entries


def _store_all(
    repo: RepoContext,
    items: Iterable[tuple[str, Source]],
    meta: dict[str, str],
    workers: int,
    progress: Callable[[ObjectEntry], None] | None,
    stored: dict[int, ObjectEntry],
) -> None:
    """Store every item with at most ``workers`` in flight; the first failure stops the
    submission and is raised once the objects in flight are done (and recorded, to be
    deleted)."""
    pending: dict[Future[ObjectEntry], int] = {}
    error: BaseException | None = None

    def collect(done: Iterable[Future[ObjectEntry]]) -> None:
        nonlocal error
        for future in done:
            index = pending.pop(future)
            try:
                stored[index] = future.result()
            except BaseException as exc:
                error = error or exc
                continue
            if progress is not None:
                progress(stored[index])

    with ThreadPoolExecutor(workers, thread_name_prefix="graveler-upload") as pool:
        try:
            for index, (path, source) in enumerate(items):
                validate.object_key(path)
                _check_source(path, source)
                if len(pending) >= 2 * workers:
                    collect(wait(pending, return_when=FIRST_COMPLETED).done)
                if error is not None:
                    break
                pending[pool.submit(_store_one, repo, path, source, meta)] = index
        finally:
            collect(wait(pending).done)
    if error is not None:
        raise error


def _store_one(repo: RepoContext, path: str, source: Source, meta: dict[str, str]) -> ObjectEntry:
    """One object, durable once the store's ``sync`` has run for it."""
    if isinstance(source, os.PathLike):
        with open(source, "rb", buffering=0) as fh:
            if os.fstat(fh.fileno()).st_size <= SMALL_FILE:
                source = fh.read()  # one read of the exact size
            else:
                return store_object(repo, path, fh, metadata=meta, durable=False)
    return store_object(repo, path, source, metadata=meta, durable=False)


def _check_source(path: str, source: object) -> None:
    if isinstance(source, bytes | os.PathLike) or callable(getattr(source, "read", None)):
        return
    raise InvalidArgument(
        f"the source of {path!r} must be bytes, a binary file object or a local path "
        f"(os.PathLike), not {type(source).__name__}"
    )

