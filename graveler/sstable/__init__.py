"""Sorted string tables: the immutable files that hold graveler's committed data.

"Graveler sstable layout v1" (:data:`FORMAT_VERSION`) is the RocksDB block-based table format
(footer format version 6), uncompressed, with XXH3 block checksums. Files are written by
:class:`SstWriter` (RocksDB's ``SstFileWriter`` via rocksdict) and read by :class:`SstReader`, a
pure-Python decoder that verifies every checksum. See :mod:`graveler.sstable.format` for the
on-disk layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graveler.sstable.reader import SstReader

if TYPE_CHECKING:
    from graveler.sstable.writer import SstWriter, table_bytes

#: Version of graveler's sstable layout (RocksDB block-based table, uncompressed, XXH3).
FORMAT_VERSION = 1

__all__ = ["FORMAT_VERSION", "SstReader", "SstWriter", "table_bytes"]


def __getattr__(name: str) -> Any:
    """The writer's names, imported on first use: it loads rocksdict, which reads never need."""
    if name in ("SstWriter", "table_bytes"):
        from graveler.sstable import writer

        return getattr(writer, name)
    raise AttributeError(f"module 'graveler.sstable' has no attribute {name!r}")
