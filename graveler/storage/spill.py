"""A temporary sorted map of byte keys to byte values on local disk, for work that gathers
more entries than memory should hold and then reads them back in key order (an import
ingesting millions of objects).

A :class:`Spill` is a SQLite file in its own temporary directory (the standard library's
``sqlite3``, no journal, no fsync: nothing in it outlives the process that wrote it). A key
written twice keeps its last value. Closing it (or leaving its ``with`` block, however) removes
the directory.

>>> with Spill() as spill:                                   # doctest: +SKIP
...     spill.put_many([(b"b", b"2"), (b"a", b"1")])
...     list(spill.items())                                  # [(b"a", b"1"), (b"b", b"2")]
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType

from graveler.core.errors import StorageError

#: Rows read per statement when iterating.
_PAGE = 10_000


class Spill:
    """A temporary key-ordered map on disk (see the module docstring); one thread at a time."""

    def __init__(self, directory: str | None = None, prefix: str = "graveler-spill-") -> None:
        """Make the map in a new temporary directory under ``directory`` (default: the
        system's). Raises StorageError when it cannot be made."""
        try:
            self._dir = Path(tempfile.mkdtemp(prefix=prefix, dir=directory))
            self._conn = sqlite3.connect(self._dir / "spill.db", isolation_level=None)
            self._conn.execute("PRAGMA journal_mode = OFF")
            self._conn.execute("PRAGMA synchronous = OFF")
            self._conn.execute("CREATE TABLE spill (key BLOB PRIMARY KEY, value BLOB NOT NULL)")
        except (OSError, sqlite3.Error) as exc:
            self.close()
            raise StorageError(f"cannot make a temporary file for spilled entries: {exc}") from exc

    @property
    def path(self) -> Path:
        """The temporary directory (gone once closed)."""
        return self._dir

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        """Write ``items`` in one transaction; a key already there takes the new value."""
        try:
            self._conn.execute("BEGIN")
            self._conn.executemany(
                "INSERT INTO spill (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                items,
            )
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StorageError(f"writing spilled entries failed: {exc}") from exc

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM spill").fetchone()[0])

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value), keys in bytewise order, read a page at a time."""
        after = b""
        query = "SELECT key, value FROM spill WHERE key >= ? ORDER BY key LIMIT ?"
        while True:
            page = self._conn.execute(query, (after, _PAGE)).fetchall()
            yield from ((bytes(k), bytes(v)) for k, v in page)
            if len(page) < _PAGE:
                return
            after = bytes(page[-1][0]) + b"\x00"  # the smallest key past the last one

    def close(self) -> None:
        """Drop the map and its directory (idempotent)."""
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None  # type: ignore[assignment]
        directory = getattr(self, "_dir", None)
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)

    def __enter__(self) -> Spill:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
