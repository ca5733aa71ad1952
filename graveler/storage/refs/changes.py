"""Change detection for SQLite databases: has anything been committed since I last looked?

Caches of mutable rows (branch views, :mod:`graveler.storage.refs.sql_views`) stay correct across
processes by asking this before every use. The answer must be cheap (it runs on every read by
branch name) and never miss a commit, whichever process or connection made it.

A SQLite database in WAL mode keeps a *wal-index* in the ``<database>-shm`` file, shared by
every connection of every process through ``mmap``. Its header (two copies of 48 bytes, the
format documented at https://www.sqlite.org/walformat.html) is rewritten by every commit: the
change counter ``iChange`` is incremented and ``mxFrame`` (the last valid WAL frame) moves;
a checkpoint that restarts the WAL changes its salts. So the header's bytes differ after any
commit, and the marker reads them from a memory mapping of the file's first page: no system
call, which matters on every read by branch name (a ``pread`` costs about as much as the
rest of a ``stat``). A commit counts as finished for its writer only once the header is
written, so a reader that sees the old header reads a state that was current when it
looked.

A mapping read past the end of its file kills the process with SIGBUS, and SQLite truncates
the ``-shm`` file when a connection finds itself its first user: no process holds a shared
lock on its "DMS" byte, which every connection holds for as long as it is open. The lock is
a POSIX record lock, so it belongs to the process and any ``close`` of any descriptor of the
file drops all of the process's locks on it. What keeps the mapping sound:

* the marker holds a connection of its own open for its lifetime, so this process holds
  the DMS lock while the mapping is read, no other process can truncate the file, and it is
  never deleted and recreated under the descriptor (SQLite removes it only when the last
  connection closes);
* the descriptor is opened once per file and process and shared by every marker of it
  (:class:`_SharedHeader`), and closed only after the last of them has closed its own
  connection: a marker's close never drops the locks of another connection's database;
* a closed marker never reads: every probe of it answers a new object, which equals
  nothing, so caches read again rather than trust;
* a child process forked from this one inherits the mappings but none of the locks: there,
  every marker made before the fork reads the header with ``pread`` instead, where a
  truncated file is a short read (answered with a new object as well), not a crash;
* writes of this process are also counted directly (``Database.local_writes``), which covers
  in-memory databases;
* where the header cannot be opened, the marker falls back to ``PRAGMA data_version`` on its
  own (never writing) connection, which SQLite documents for exactly this purpose.

PostgreSQL has no such cheap signal: its views are not cached (:func:`sqlite_marker` is only
used for SQLite).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import sqlite3
import threading
from collections.abc import Callable
from functools import partial

#: Bytes of the wal-index header that change with every commit (both copies).
HEADER_BYTES = 96


class ChangeMarker:
    """:meth:`probe` returns a value that changes whenever anything is committed to the
    database by another connection or process: two equal values mean nothing was committed
    in between. After :meth:`close` every probe answers "changed"."""

    def __init__(
        self,
        probe: Callable[[], object],
        keepalive: sqlite3.Connection | None,
        header: _SharedHeader | None = None,
    ) -> None:
        self._probe = probe
        self._keepalive = keepalive
        self._header = header
        self._lock = threading.Lock()
        self._closed = False

    def probe(self) -> object:
        with self._lock:
            if self._closed:
                return object()
            return self._probe()

    def close(self) -> None:
        """Close the marker's connection, then let go of the header (whose descriptor closes
        with the last marker of the file: see the module docstring)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._keepalive is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._keepalive.close()
                self._keepalive = None
            if self._header is not None:
                self._header.release()
                self._header = None


def local_only() -> ChangeMarker:
    """A marker that never changes: for a private in-memory database, whose writes are all
    this process's own (and counted by ``Database.local_writes``)."""
    return ChangeMarker(lambda: 0, None)


def sqlite_marker(path: str, busy_timeout: float) -> ChangeMarker:
    """The marker of the SQLite database file at ``path`` (already in WAL mode; a
    ``file:`` URI is opened as one, and watched through ``PRAGMA data_version``)."""
    uri = path.startswith("file:")
    conn = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=False, uri=uri
    )
    try:
        conn.execute("PRAGMA data_version").fetchone()  # opens the WAL index
        header = None if uri else _SharedHeader.acquire(path + "-shm")
    except (OSError, ValueError, sqlite3.Error):
        header = None
    if header is not None:
        return ChangeMarker(partial(_read_header, header), conn, header)

    def data_version() -> int:  # serialized by the marker's lock, as the connection needs
        return int(conn.execute("PRAGMA data_version").fetchone()[0])

    return ChangeMarker(data_version, conn)


class _SharedHeader:
    """This process's descriptor of one ``-shm`` file and a mapping of its header, shared
    by the markers of that file and closed when the last of them lets go."""

    _open: dict[tuple[int, int], _SharedHeader] = {}
    _lock = threading.Lock()

    def __init__(self, key: tuple[int, int], fd: int, mapping: mmap.mmap | None) -> None:
        self.key = key
        self.fd = fd
        self.mapping = mapping  # None: read with pread (a forked child, a short file)
        self.users = 1

    @classmethod
    def acquire(cls, shm_path: str) -> _SharedHeader:
        """The shared header of ``shm_path``, opened on first use (stat before open: a
        descriptor opened only to be closed would drop this process's locks)."""
        found = os.stat(shm_path)
        key = (found.st_dev, found.st_ino)
        with cls._lock:
            shared = cls._open.get(key)
            if shared is not None:
                shared.users += 1
                return shared
            fd = os.open(shm_path, os.O_RDONLY)
            mapping = None
            if os.fstat(fd).st_size >= HEADER_BYTES:
                with contextlib.suppress(OSError, ValueError):
                    mapping = mmap.mmap(fd, HEADER_BYTES, access=mmap.ACCESS_READ)
            shared = cls._open[key] = cls(key, fd, mapping)
            return shared

    def release(self) -> None:
        with self._lock:
            self.users -= 1
            if self.users > 0:
                return
            del self._open[self.key]
            mapping, self.mapping = self.mapping, None
            if mapping is not None:
                mapping.close()
            with contextlib.suppress(OSError):
                os.close(self.fd)

    @classmethod
    def after_fork_in_child(cls) -> None:
        """The child holds none of its parent's locks: no mapping of theirs is read there
        (and the registry's lock may have been held by another thread at the fork)."""
        cls._lock = threading.Lock()
        for shared in cls._open.values():
            shared.mapping = None


os.register_at_fork(after_in_child=_SharedHeader.after_fork_in_child)


def _read_header(header: _SharedHeader) -> object:
    """The header's bytes; a new object when they cannot be read whole (see the module
    docstring)."""
    mapping = header.mapping
    if mapping is not None:
        return mapping[:HEADER_BYTES]
    try:
        data = os.pread(header.fd, HEADER_BYTES, 0)
    except OSError:
        return object()
    return data if len(data) == HEADER_BYTES else object()
