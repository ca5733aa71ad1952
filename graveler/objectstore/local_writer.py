"""Durable writes of files under a local object store's root: the push-style writer and the
fsync helpers :class:`~graveler.objectstore.local.LocalObjectStore` shares with it.

A file is durable when its bytes *and* the directory entry naming it are on disk: the file
is fsynced, and so is its directory (POSIX requires both). The writer overlaps the two:

* a plain writer fills a temporary file, fsyncs it, renames it over the key and fsyncs the
  directory, so readers see the old object or the complete new one, even after a crash;
* a ``fresh`` writer (a new unique key nobody reads before ``commit``) writes the file in
  place. Its directory entry exists from the start, so the directory fsync runs in the
  background while the bytes are written, and ``commit`` waits for both fsyncs: one disk
  flush of latency instead of two. A crash before ``commit`` leaves an unreferenced partial
  file, which garbage collection removes, as it removes objects never staged;
* a writer opened with ``durable=False`` fsyncs its file but not its directory: the store's
  ``sync`` does that later, once per directory for a whole batch of objects.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from graveler.errors import StorageError
from graveler.objectstore._io import BaseObjectWriter, from_timestamp
from graveler.objectstore.port import ObjectInfo

#: Name prefix of in-flight temporary files; reserved, never part of a valid key here.
TMP_PREFIX = ".graveler-tmp-"
FILE_MODE = 0o644
#: Buffer of a writer's file: small writes (pyarrow writes a few bytes at a time) are joined.
WRITE_BUFFER = 64 << 10
#: Threads that fsync directories in the background (shared by every store of the process).
_SYNC_THREADS = 8


def fsync_directory(path: str) -> None:
    """Flush a directory's entries to disk (best effort: some filesystems refuse)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _DirectorySyncer:
    """Background directory fsyncs, shared: a request joins an fsync of the same directory
    that is queued but not started yet (it will start after the caller's entry was made, so
    it covers it); otherwise a new one is queued. Many files created in one directory at
    once thus cost a few directory fsyncs, not one each."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queued: dict[str, Future[None]] = {}
        self._pool: ThreadPoolExecutor | None = None

    def request(self, path: str) -> Future[None]:
        with self._lock:
            future = self._queued.get(path)
            if future is None:
                future = self._queued[path] = Future()
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(_SYNC_THREADS, "graveler-dirsync")
                self._pool.submit(self._run, path, future)
            return future

    def _run(self, path: str, future: Future[None]) -> None:
        with self._lock:
            del self._queued[path]  # requests from now on need an fsync that starts later
        try:
            fsync_directory(path)
        except BaseException as exc:  # pragma: no cover - fsync_directory swallows OSError
            future.set_exception(exc)
        else:
            future.set_result(None)


_syncer = _DirectorySyncer()


def fsync_directory_async(path: str) -> Future[None]:
    """:func:`fsync_directory` in the background, shared with concurrent requests."""
    return _syncer.request(path)


def unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


class LocalObjectWriter(BaseObjectWriter):
    """Writes one object of a local store (see the module docstring). ``path`` is the key's
    file, whose directory exists; ``error`` turns an OSError into the StorageError raised.
    With ``exclusive`` the finished temp file is hard-linked to ``path`` instead of replacing
    it: ``commit`` raises FileExistsError (and publishes nothing) when a file is there."""

    def __init__(
        self,
        key: str,
        path: str,
        *,
        fresh: bool,
        durable: bool = True,
        exclusive: bool = False,
        error: Callable[[OSError], StorageError],
    ) -> None:
        super().__init__(key)
        self._path = path
        self._fresh = fresh
        self._exclusive = exclusive
        self._durable = durable
        self._error = error
        directory = os.path.dirname(path)
        self._dir_synced: Future[None] | None = None
        try:
            if fresh:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
                self._tmp = path
                if durable:
                    self._dir_synced = fsync_directory_async(directory)
            else:
                fd, self._tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=directory)
        except OSError as exc:
            raise self._error(exc) from exc
        self._file = os.fdopen(fd, "wb", buffering=WRITE_BUFFER)
        self._dir = directory

    def _write(self, view: memoryview) -> None:
        try:
            self._file.write(view)
        except OSError as exc:
            raise self._error(exc) from exc

    def _publish(self) -> ObjectInfo:
        try:
            out = self._file
            out.flush()
            if not self._fresh:
                os.fchmod(out.fileno(), FILE_MODE)
            os.fsync(out.fileno())
            mtime = os.fstat(out.fileno()).st_mtime
            out.close()
            if not self._fresh:
                self._move_into_place()
                if self._durable:
                    fsync_directory(self._dir)
            elif self._dir_synced is not None:
                self._dir_synced.result()
        except FileExistsError:
            raise
        except OSError as exc:
            raise self._error(exc) from exc
        return ObjectInfo(self._key, self.size, from_timestamp(mtime))

    def _move_into_place(self) -> None:
        if not self._exclusive:
            os.replace(self._tmp, self._path)
            return
        try:
            os.link(self._tmp, self._path)  # fails atomically when the path exists
        finally:
            unlink_quietly(self._tmp)

    def _discard(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()
        if self._dir_synced is not None:
            with contextlib.suppress(Exception):
                self._dir_synced.result()
        unlink_quietly(self._tmp)
