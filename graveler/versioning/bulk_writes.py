"""Uploading many objects at once: bytes written first, then all staged in one transaction.

:func:`upload_many` keeps the promise of :func:`graveler.versioning.writes.put` (an object's bytes
are durable before its entry is staged) while paying for it once per batch rather than once per
object. Objects are written without flushing, in batches of :data:`BATCH` (small sources of
a batch in one call of the store's ``put_fresh_batch`` where it has one, as the local store
does; several batches in flight on stores whose time goes to round trips, such as S3), then
``ObjectStore.sync`` makes them all durable at once (one ``syncfs`` on a local Linux disk).
The staging transaction is filled while that flush runs and commits only after it returned.
If anything fails, nothing is staged and the objects already written are deleted again."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import BinaryIO

from graveler.core import validate
from graveler.core.errors import InvalidArgument
from graveler.storage.entry import ObjectEntry
from graveler.storage.objects import new_physical_address
from graveler.storage.objectstore.port import ObjectInfo
from graveler.versioning.writes import delete_stored, guess_type, stage_stored, store_object
from graveler.views.context import RepoContext

#: Batches in flight by default for stores without ``put_fresh_batch`` (S3: the time is
#: round trips, so threads overlap them). A local store writes small objects fastest from
#: one thread: the work is Python and system calls, and threads only contend for the GIL.
DEFAULT_WORKERS = 8
#: Objects per task handed to a thread.
BATCH = 64
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
    workers: int | None = None,
    progress: Callable[[ObjectEntry], None] | None = None,
) -> list[ObjectEntry]:
    """Upload every ``(path, source)`` of ``items`` and stage them all in one transaction;
    returns the entries in input order (a path given twice is staged once, the later one
    winning). A source is bytes, a binary file object, or a local file's path as an
    ``os.PathLike`` (``pathlib.Path``). ``progress`` is called with each entry once its
    bytes are stored. Raises InvalidKey / InvalidArgument for a bad path or source (before
    anything is written when it comes first), BranchNotFound, ProtectedBranch, or whatever
    a read or write failed with; then nothing is staged and nothing written is kept."""
    if workers is None:
        workers = 1 if hasattr(repo.store, "put_fresh_batch") else DEFAULT_WORKERS
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
    with ThreadPoolExecutor(1, thread_name_prefix="graveler-sync") as pool:
        synced = pool.submit(repo.store.sync, [e.physical_address for e in entries])
        # The rows are prepared and inserted while the store flushes; the staging
        # transaction takes the wait as its last item, so it commits only once every
        # object is durable (a failed flush rolls it back).
        stage_stored(repo, branch, entries, before_commit=synced.result)
    return entries


def _store_all(
    repo: RepoContext,
    items: Iterable[tuple[str, Source]],
    meta: dict[str, str],
    workers: int,
    progress: Callable[[ObjectEntry], None] | None,
    stored: dict[int, ObjectEntry],
) -> None:
    """Store every item, in batches of up to :data:`BATCH` items with at most ``workers``
    batches in flight (one task per batch: small objects cost little more than their
    syscalls); the first failure stops the submission and is raised once the batches in
    flight are done (and recorded, to be deleted)."""
    pending: dict[Future[list[ObjectEntry]], int] = {}
    errors: list[BaseException] = []

    def collect(done: Iterable[Future[list[ObjectEntry]]]) -> None:
        for future in done:
            first = pending.pop(future)
            try:
                entries = future.result()
            except _BatchFailed as failed:
                entries, error = failed.stored, failed.error
                errors.append(error)
            for offset, entry in enumerate(entries):
                stored[first + offset] = entry
                if progress is not None and not errors:
                    progress(entry)

    with ThreadPoolExecutor(workers, thread_name_prefix="graveler-upload") as pool:
        try:
            for first, batch in _checked_batches(items):
                if len(pending) >= 2 * workers:
                    collect(wait(pending, return_when=FIRST_COMPLETED).done)
                if errors:
                    break
                pending[pool.submit(_store_batch, repo, batch, meta)] = first
        finally:
            collect(wait(pending).done)
    if errors:
        raise errors[0]


def _checked_batches(
    items: Iterable[tuple[str, Source]],
) -> Iterator[tuple[int, list[tuple[str, Source]]]]:
    """``items`` in batches of :data:`BATCH` with the index of each batch's first item;
    every path and source is checked before its batch is handed out."""
    batch: list[tuple[str, Source]] = []
    first = 0
    for index, (path, source) in enumerate(items):
        validate.written_key(path)
        _check_source(path, source)
        batch.append((path, source))
        if len(batch) == BATCH:
            yield first, batch
            first, batch = index + 1, []
    if batch:
        yield first, batch


class _BatchFailed(Exception):
    """A batch stopped at an error; ``stored`` holds what it stored before."""

    def __init__(self, stored: list[ObjectEntry], error: BaseException) -> None:
        super().__init__(str(error))
        self.stored, self.error = stored, error


def _store_batch(
    repo: RepoContext, batch: list[tuple[str, Source]], meta: dict[str, str]
) -> list[ObjectEntry]:
    """Store a batch in order; small sources go through the store's ``put_fresh_batch`` in
    one call where it has one. Raises _BatchFailed with the entries stored before."""
    put_batch = getattr(repo.store, "put_fresh_batch", None)
    stored: list[ObjectEntry] = []
    try:
        if put_batch is None:
            stored.extend(_store_one(repo, path, source, meta) for path, source in batch)
        else:
            _store_small_first(repo, batch, meta, put_batch, stored)
    except BaseException as exc:
        raise _BatchFailed(stored, exc) from exc
    return stored


def _store_small_first(
    repo: RepoContext,
    batch: list[tuple[str, Source]],
    meta: dict[str, str],
    put_batch: Callable[[list[tuple[str, bytes]]], list[ObjectInfo]],
    stored: list[ObjectEntry],
) -> None:
    """Large sources and file objects stream through a writer each; the small ones are read
    and then written in one ``put_batch`` call. ``stored`` gets the entries in batch order
    (on an error, those stored so far)."""
    small: list[tuple[int, str, bytes]] = []
    by_index: dict[int, ObjectEntry] = {}
    for index, (path, source) in enumerate(batch):
        data = _read_small(source) if isinstance(source, os.PathLike) else source
        if isinstance(data, bytes):
            small.append((index, path, data))
            continue
        if isinstance(source, os.PathLike):  # too large to read whole: streamed (not reopened)
            with open(source, "rb") as fh:
                by_index[index] = store_object(repo, path, fh, metadata=meta, durable=False)
        else:
            by_index[index] = _store_one(repo, path, source, meta)
        stored.append(by_index[index])
    addresses = [new_physical_address() for _ in small]
    infos = put_batch(
        [(address, data) for address, (_, _, data) in zip(addresses, small, strict=True)]
    )
    for info, (index, path, data) in zip(infos, small, strict=True):
        by_index[index] = ObjectEntry(
            path=path,
            physical_address=info.key,
            size=info.size,
            checksum=hashlib.sha256(data).hexdigest(),
            mtime=info.mtime,
            content_type=guess_type(path),
            metadata=dict(meta),
            etag=hashlib.md5(data, usedforsecurity=False).hexdigest(),
        )
    stored[:] = [by_index[i] for i in range(len(batch))]


def _store_one(repo: RepoContext, path: str, source: Source, meta: dict[str, str]) -> ObjectEntry:
    """One object, durable once the store's ``sync`` has run for it."""
    if isinstance(source, os.PathLike):
        data = _read_small(source)
        if data is None:
            with open(source, "rb") as fh:
                return store_object(repo, path, fh, metadata=meta, durable=False)
        source = data
    return store_object(repo, path, source, metadata=meta, durable=False)


def _read_small(source: os.PathLike[str]) -> bytes | None:
    """The whole file when it holds at most :data:`SMALL_FILE` bytes (read in one call of
    its exact size), else None."""
    fd = os.open(source, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        if size > SMALL_FILE:
            return None
        data = os.read(fd, size + 1)  # fewer than asked: the end of a regular file
        if len(data) <= size:
            return data
        chunks = [data]  # it grew since fstat: read it to its end
        while chunk := os.read(fd, SMALL_FILE):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _check_source(path: str, source: object) -> None:
    if isinstance(source, bytes | os.PathLike) or callable(getattr(source, "read", None)):
        return
    raise InvalidArgument(
        f"the source of {path!r} must be bytes, a binary file object or a local path "
        f"(os.PathLike), not {type(source).__name__}"
    )
