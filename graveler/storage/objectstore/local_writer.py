"""Durable writes of files under a local object store's root: the push-style writer and the
fsync helpers :class:`~graveler.storage.objectstore.local.LocalObjectStore` shares with it.

A file is durable when its bytes *and* the directory entry naming it are on disk: the file
is fsynced, then its directory (POSIX requires both; on the filesystems where the file's
fsync already commits a new file's entry, :mod:`graveler.storage.objectstore.durability`, that
second flush is skipped for fresh files):

* a plain writer fills a temporary file, fsyncs it, renames it over the key and fsyncs the
  directory, so readers see the old object or the complete new one, even after a crash;
* a ``fresh`` writer (a new unique key nobody reads before ``commit``) writes the file in
  place and fsyncs it and its directory on ``commit``. A crash before ``commit`` leaves an
  unreferenced partial file, which garbage collection removes, as it removes objects never
  staged;
* a writer opened with ``durable=False`` leaves the flushing to the store's ``sync``, which
  makes a whole batch durable at once (:func:`sync_files`: one ``syncfs`` for a large one).
  A ``fresh`` one does not fsync its file at all; a plain one still fsyncs the file before
  the rename (so a crash never replaces a good object with a torn one) and leaves only the
  directory.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from graveler.core.errors import StorageError
from graveler.storage.objectstore._io import BaseObjectWriter, from_timestamp
from graveler.storage.objectstore.durability import fsync_covers_new_entry, start_writeback, syncfs
from graveler.storage.objectstore.port import ObjectInfo

#: Name prefix of in-flight temporary files; reserved, never part of a valid key here.
TMP_PREFIX = ".graveler-tmp-"
FILE_MODE = 0o644
#: Buffer of a writer's file: small writes (pyarrow writes a few bytes at a time) are joined.
WRITE_BUFFER = 64 << 10
#: The most bytes handed to one ``write`` call. Measured on this project's machines (Linux
#: 6.18, ext4): a new file filled by one call of 2 MiB or more takes about five to ten times
#: as long as the same bytes in calls of 1 MiB (4.8 MB: 10-14 ms against 1-3 ms; 64 MiB:
#: 140-200 ms against 15 ms), as ``writev`` does; a tmpfs file fills as fast either way.
WRITE_CALL = 1 << 20
#: A writer that will fsync its file starts writing it to disk every this many bytes, so
#: the fsync at the end has little left to wait for (:func:`start_writeback`).
WRITEBACK_STEP = 8 << 20
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


#: A batch of at least this many files is made durable with one ``syncfs`` where Linux has
#: it: one flush of the filesystem instead of a journal commit per file.
SYNCFS_MIN_FILES = 32


def sync_files(root: str, count: int, plan: Callable[[], tuple[list[str], set[str]]]) -> None:
    """Make a batch of ``count`` new files inside ``root`` durable with what holds them.

    A large batch costs one ``syncfs`` of ``root``'s filesystem (its price is whatever else is
    pending there, once). A small one, or one where ``syncfs`` is missing, costs an fsync of
    each file and then each directory of ``plan()`` (files not yet flushed, directories
    holding their entries), several at a time. Raises OSError."""
    if count >= SYNCFS_MIN_FILES and syncfs(root):
        return
    files, folders = plan()
    pool = _file_pool()
    others = [pool.submit(_fsync_file, p) for p in files[1:]]  # the caller takes the first
    try:
        if files:
            _fsync_file(files[0])
    finally:
        for future in others:
            future.result()
    for done in [fsync_directory_async(d) for d in folders]:
        done.result()


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_FILE_POOL: list[ThreadPoolExecutor] = []
_FILE_POOL_LOCK = threading.Lock()


def _file_pool() -> ThreadPoolExecutor:
    with _FILE_POOL_LOCK:
        if not _FILE_POOL:
            _FILE_POOL.append(ThreadPoolExecutor(_SYNC_THREADS, "graveler-filesync"))
        return _FILE_POOL[0]


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def write_new_file(path: str, data: bytes, directory: Callable[[str, bool], None]) -> float:
    """Create the file ``path`` (which must not exist) holding ``data``, without flushing
    it; returns its mtime. ``directory(path, missing)`` is called first to make sure its
    directory exists, and once more with ``missing=True`` if the create finds none."""
    directory(path, False)
    try:  # O_EXCL: never another's file (nor a symbolic link) at this name
        fd = os.open(path, _NEW_FILE, FILE_MODE)
    except FileNotFoundError:
        directory(path, True)
        fd = os.open(path, _NEW_FILE, FILE_MODE)
    try:
        _write_all(fd, memoryview(data))
        return os.fstat(fd).st_mtime
    except BaseException:
        unlink_quietly(path)  # ours: created above
        raise
    finally:
        os.close(fd)


def make_directories(directory: str) -> list[str]:
    """Create ``directory`` and its missing parents; the directories that gained an entry
    (the parents of those created), outermost first."""
    created: list[str] = []
    current = directory
    while not os.path.isdir(current) and os.path.dirname(current) != current:
        created.append(current)
        current = os.path.dirname(current)
    if created:
        os.makedirs(directory, exist_ok=True)
    return [os.path.dirname(new_dir) for new_dir in reversed(created)]


def unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


class LocalObjectWriter(BaseObjectWriter):
    """Writes one object of a local store (see the module docstring). ``path`` is the key's
    file, whose directory exists; ``error`` turns an OSError into the StorageError raised.
    With ``exclusive`` the finished temp file is hard-linked to ``path`` instead of replacing
    it: ``commit`` raises FileExistsError (and publishes nothing) when a file is there.
    Small writes are gathered in a buffer of :data:`WRITE_BUFFER` bytes; a file that will be
    fsynced is handed to the disk every :data:`WRITEBACK_STEP` bytes as it grows."""

    def __init__(
        self,
        key: str,
        path: str,
        *,
        fresh: bool,
        durable: bool = True,
        exclusive: bool = False,
        error: Callable[[OSError], StorageError],
        unflushed: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(key)
        self._unflushed = unflushed  # told the key of a committed file left unflushed
        self._path = path
        self._fresh = fresh
        self._exclusive = exclusive
        self._durable = durable
        self._error = error
        self._dir = os.path.dirname(path)
        self._buffer = bytearray()
        self._on_disk = 0  # bytes handed to the OS
        self._writeback_from: int | None = 0 if (durable or not fresh) else None
        try:
            if fresh:
                self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
                self._tmp = path
            else:
                self._fd, self._tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=self._dir)
        except OSError as exc:
            raise self._error(exc) from exc

    def _write(self, view: memoryview) -> None:
        if len(self._buffer) + view.nbytes <= WRITE_BUFFER:
            self._buffer += view
            return
        try:
            self._drain()
            if view.nbytes >= WRITE_BUFFER:
                self._write_out(view)
            else:
                self._buffer += view
        except OSError as exc:
            raise self._error(exc) from exc

    def _drain(self) -> None:
        if self._buffer:
            self._write_out(memoryview(self._buffer))
            self._buffer = bytearray()

    def _write_out(self, view: memoryview) -> None:
        _write_all(self._fd, view)
        self._on_disk += view.nbytes
        start = self._writeback_from
        if start is not None and self._on_disk - start >= WRITEBACK_STEP:
            start_writeback(self._fd, start, self._on_disk - start)
            self._writeback_from = self._on_disk

    def _publish(self) -> ObjectInfo:
        """Write out, flush as ``durable`` asks (the file, then its directory: on a
        journalling filesystem the second finds the entry already on disk), and publish."""
        fd = self._fd
        try:
            self._drain()
            if not self._fresh:
                os.fchmod(fd, FILE_MODE)
            if self._durable or not self._fresh:
                os.fsync(fd)
            info = os.fstat(fd)
            self._fd = -1
            os.close(fd)
            if not self._fresh:
                self._move_into_place()
            if self._durable and not (self._fresh and fsync_covers_new_entry(info.st_dev)):
                fsync_directory(self._dir)
            if not self._durable and self._fresh and self._unflushed is not None:
                self._unflushed(self._key)
        except FileExistsError:
            raise
        except OSError as exc:
            raise self._error(exc) from exc
        return ObjectInfo(self._key, self.size, from_timestamp(info.st_mtime))

    def _move_into_place(self) -> None:
        if not self._exclusive:
            os.replace(self._tmp, self._path)
            return
        try:
            os.link(self._tmp, self._path)  # fails atomically when the path exists
        finally:
            unlink_quietly(self._tmp)

    def _discard(self) -> None:
        ours = True
        if self._fd >= 0:
            if self._fresh:  # the name may have been given to another's file since
                ours = _same_file(self._fd, self._tmp)
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        if ours:
            unlink_quietly(self._tmp)


def _same_file(fd: int, path: str) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        held, named = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def _write_all(fd: int, view: memoryview) -> None:
    """``os.write`` until every byte of ``view`` is written, at most :data:`WRITE_CALL` bytes
    a call."""
    while view.nbytes:
        view = view[os.write(fd, view[:WRITE_CALL]) :]
