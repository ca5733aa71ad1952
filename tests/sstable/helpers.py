"""Shared helpers for the sstable tests."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

from rocksdict import Options, Rdict

from graveler.storage.sstable import SstWriter


def write_sst(path: Path, items: Iterable[tuple[bytes, bytes]], block_size: int = 16 * 1024) -> int:
    """Write ``items`` (sorted) with SstWriter; return the file size."""
    with SstWriter(str(path), block_size=block_size) as writer:
        for key, value in items:
            writer.add(key, value)
        return writer.finish()


def ingest_and_dump(sst: Path) -> list[tuple[bytes, bytes]]:
    """Ingest ``sst`` into a fresh RocksDB (raw mode) and return all of its items in order."""
    with tempfile.TemporaryDirectory() as tmp:
        db_path = str(Path(tmp) / "db")
        options = Options(raw_mode=True)
        db = Rdict(db_path, options=options)
        try:
            db.ingest_external_file([str(sst)])
            items = list(db.items())
            assert all(isinstance(k, bytes) and isinstance(v, bytes) for k, v in items)
            return [(k, v) for k, v in items if isinstance(k, bytes) and isinstance(v, bytes)]
        finally:
            db.close()
