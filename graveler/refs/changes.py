"""Change detection for SQLite databases: has anything been committed since I last looked?

Caches of mutable rows (branch views, :mod:`graveler.refs.sql_views`) stay correct across
processes by asking this before every use. The answer must be cheap (it runs on every read by
branch name) and never miss a commit, whichever process or connection made it.

A SQLite database in WAL mode keeps a *wal-index* in the ``<database>-shm`` file, shared by
every connection of every process through ``mmap``. Its header (two copies of 48 bytes, the
format documented at https://www.sqlite.org/walformat.html) is rewritten by every commit: the
change counter ``iChange`` is incremented and ``mxFrame`` (the last valid WAL frame) moves;
a checkpoint that restarts the WAL changes its salts. So the header's bytes differ after any
commit, and reading them from our own read-only mapping of the file costs a memory copy, not
a system call. A commit counts as finished for its writer only once the header is written,
so a reader that sees the old header reads a state that was current when it looked.

Three details keep this sound:

* the marker holds a connection of its own open for its lifetime, so the ``-shm`` file can
  never be deleted and recreated under the mapping (SQLite removes it only when the last
  connection closes);
* writes of this process are also counted directly (``Database.local_writes``), which covers
  in-memory databases;
* where the mapping is unavailable, the marker falls back to ``PRAGMA data_version`` on its
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

#: Bytes of the wal-index header that change with every commit (both copies).
HEADER_BYTES = 96


class ChangeMarker:
    """:attr:`probe` returns a value that changes whenever anything is committed to the
    database by another connection or process: two equal values mean nothing was committed
    in between."""

    def __init__(self, probe: Callable[[], object], keepalive: sqlite3.Connection | None):
        self.probe = probe
        self._keepalive = keepalive

    def close(self) -> None:
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
        header = None if uri else _map_header(path + "-shm")
    except (OSError, ValueError, sqlite3.Error):
        header = None
    if header is not None:
        return ChangeMarker(lambda: header[:HEADER_BYTES], conn)
    lock = threading.Lock()

    def data_version() -> int:
        with lock:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    return ChangeMarker(data_version, conn)


def _map_header(shm_path: str) -> mmap.mmap | None:
    """A read-only mapping of the wal-index header, or None when there is no such file."""
    fd = os.open(shm_path, os.O_RDONLY)
    try:
        if os.fstat(fd).st_size < HEADER_BYTES:
            return None
        return mmap.mmap(fd, HEADER_BYTES, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
