"""Change detection for SQLite databases: has anything been committed since I last looked?

Caches of mutable rows (branch views, :mod:`graveler.refs.sql_views`) stay correct across
processes by asking this before every use. The answer must be cheap (it runs on every read by
branch name) and never miss a commit, whichever process or connection made it.

A SQLite database in WAL mode keeps a *wal-index* in the ``<database>-shm`` file, shared by
every connection of every process through ``mmap``. Its header (two copies of 48 bytes, the
format documented at https://www.sqlite.org/walformat.html) is rewritten by every commit: the
change counter ``iChange`` is incremented and ``mxFrame`` (the last valid WAL frame) moves;
a checkpoint that restarts the WAL changes its salts. So the header's bytes differ after any
commit, and reading them costs one ``pread`` of the file. (A memory mapping would save that
system call, but a mapping read after the file was truncated kills the process with SIGBUS,
and SQLite does truncate the file when a connection finds itself the first to use it.) A
commit counts as finished for its writer only once the header is written, so a reader that
sees the old header reads a state that was current when it looked.

Four details keep this sound:

* the marker holds a connection of its own open for its lifetime, so the ``-shm`` file can
  never be deleted and recreated under the descriptor it reads (SQLite removes it only when
  the last connection closes);
* a header that cannot be read (a short read, an error) and every probe of a closed marker
  answer a new object, which equals nothing: caches read again rather than trust;
* writes of this process are also counted directly (``Database.local_writes``), which covers
  in-memory databases;
* where the header cannot be opened, the marker falls back to ``PRAGMA data_version`` on its
  own (never writing) connection, which SQLite documents for exactly this purpose.

PostgreSQL has no such cheap signal: its views are not cached (:func:`sqlite_marker` is only
used for SQLite).
"""

from __future__ import annotations

import contextlib
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
        header_fd: int | None = None,
    ) -> None:
        self._probe = probe
        self._keepalive = keepalive
        self._header_fd = header_fd
        self._lock = threading.Lock()
        self._closed = False

    def probe(self) -> object:
        with self._lock:
            if self._closed:
                return object()
            return self._probe()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._header_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._header_fd)
                self._header_fd = None
            if self._keepalive is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._keepalive.close()
                self._keepalive = None


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
        header = None if uri else _open_header(path + "-shm")
    except (OSError, sqlite3.Error):
        header = None
    if header is not None:
        return ChangeMarker(partial(_read_header, header), conn, header)

    def data_version() -> int:  # serialized by the marker's lock, as the connection needs
        return int(conn.execute("PRAGMA data_version").fetchone()[0])

    return ChangeMarker(data_version, conn)


def _open_header(shm_path: str) -> int | None:
    """A descriptor of the wal-index file to read its header from, or None when the file
    is missing or shorter than a header."""
    fd = os.open(shm_path, os.O_RDONLY)
    try:
        if os.fstat(fd).st_size >= HEADER_BYTES:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _read_header(fd: int) -> object:
    """The header's bytes; a new object when they cannot be read whole (see the module
    docstring)."""
    try:
        header = os.pread(fd, HEADER_BYTES, 0)
    except OSError:
        return object()
    return header if len(header) == HEADER_BYTES else object()
