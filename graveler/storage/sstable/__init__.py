"""Sorted string tables: the immutable files that hold graveler's committed data.

Graveler's tables are RocksDB block-based tables (footer format version 6), uncompressed,
with XXH3 block checksums. :mod:`graveler.storage.sstable.builder` writes them in Python a block at
a time ("graveler sstable layout v2": entries stored whole, blocks placed by the caller and
copyable between tables). Layout v1 files, written by RocksDB's own ``SstFileWriter``
(:class:`SstWriter`, via rocksdict), were what graveler wrote before and are still read.
:class:`SstReader` is a pure-Python decoder of both that verifies every checksum. See
:mod:`graveler.storage.sstable.format` for the on-disk layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graveler.storage.sstable.reader import SstReader

if TYPE_CHECKING:
    from graveler.storage.sstable.writer import SstWriter, table_bytes

#: Version of graveler's sstable layout that graveler writes (RocksDB block-based table,
#: uncompressed, XXH3; see the module docstring).
FORMAT_VERSION = 2

__all__ = ["FORMAT_VERSION", "SstReader", "SstWriter", "table_bytes"]


def __getattr__(name: str) -> Any:
    """The writer's names, imported on first use: it loads rocksdict, which reads never need."""
    if name in ("SstWriter", "table_bytes"):
        from graveler.storage.sstable import writer

        return getattr(writer, name)
    raise AttributeError(f"module 'graveler.storage.sstable' has no attribute {name!r}")
