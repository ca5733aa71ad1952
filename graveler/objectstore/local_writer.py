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
  file, which garbage collection removes, as it removes objects never staged.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from graveler.errors import StorageError
from graveler.objectstore._io import BaseObjectWriter, from_timestamp
from graveler.objectstore.port import ObjectInfo

#: Name prefix of in-flight temporary files; reserved, never part of a valid key here.
TMP_PREFIX = ".graveler-tmp-"
FILE_MODE = 0o644
#: Buffer of a writer's file: small writes (pyarrow writes a few bytes at a time) are joined.
WRITE_BUFFER = 1 << 20
#: Threads that fsync directories in the background (shared by every store of the process).
_SYNC_THREADS = 8
_syncer: ThreadPoolExecutor | None = None


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


def fsync_directory_async(path: str) -> Future[None]:
    """:func:`fsync_directory` on a background thread."""
    global _syncer
    if _syncer is None:
        _syncer = ThreadPoolExecutor(_SYNC_THREADS, thread_name_prefix="graveler-dirsync")
    return _syncer.submit(fsync_directory, path)


def unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


class LocalObjectWriter(BaseObjectWriter):
    """Writes one object of a local store (see the module docstring). ``path`` is the key's
    file, whose directory exists; ``error`` turns an OSError into the StorageError raised."""

    def __init__(
        self, key: str, path: str, *, fresh: bool, error: Callable[[OSError], StorageError]
    ) -> None:
        super().__init__(key)
        self._path = path
        self._fresh = fresh
        self._error = error
        directory = os.path.dirname(path)
        self._dir_synced: Future[None] | None = None
        try:
            if fresh:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
                self._tmp = path
                self._dir_synced = fsync_directory_async(directory)
            else:
                fd, self._tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=directory)
        except OSError as exc:
            raise self._error(exc) from exc
        self._file = os.fdopen(fd, "wb", buffering=WRITE_BUFFER)

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
            if self._fresh:
                assert self._dir_synced is not None
                self._dir_synced.result()
            else:
                os.replace(self._tmp, self._path)
                fsync_directory(os.path.dirname(self._path))
        except OSError as exc:
            raise self._error(exc) from exc
        return ObjectInfo(self._key, self.size, from_timestamp(mtime))

    def _discard(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()
        if self._dir_synced is not None:
            with contextlib.suppress(Exception):
                self._dir_synced.result()
        unlink_quietly(self._tmp)
