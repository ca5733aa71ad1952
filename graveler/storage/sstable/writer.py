"""Writing graveler sstables through RocksDB's ``SstFileWriter`` (rocksdict, raw mode).

The files follow "graveler sstable layout v1" (see :mod:`graveler.storage.sstable.format`): RocksDB
block-based table format version 6, no compression, XXH3 block checksums. The options are
pinned explicitly so a rocksdict upgrade with other defaults cannot silently change the layout.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from operator import lt
from types import TracebackType

from rocksdict import (
    BlockBasedOptions,
    ChecksumType,
    DBCompressionType,
    Options,
    SstFileWriter,
)

from graveler.core.errors import InvalidArgument, StorageError

#: Block-based table format version the writer produces.
TABLE_FORMAT_VERSION = 6
DEFAULT_BLOCK_SIZE = 16 * 1024
_DATA_RESTART_INTERVAL = 16
_INDEX_RESTART_INTERVAL = 1


def table_options(block_size: int = DEFAULT_BLOCK_SIZE) -> Options:
    """rocksdict options producing graveler sstable layout v1 with the given block size."""
    table = BlockBasedOptions()
    table.set_block_size(block_size)
    table.set_checksum_type(ChecksumType.xxh3())
    table.set_format_version(TABLE_FORMAT_VERSION)
    table.set_block_restart_interval(_DATA_RESTART_INTERVAL)
    table.set_index_block_restart_interval(_INDEX_RESTART_INTERVAL)
    options = Options(raw_mode=True)
    options.set_compression_type(DBCompressionType.none())
    options.set_bottommost_compression_type(DBCompressionType.none())
    options.set_block_based_table_factory(table)
    return options


class SstWriter:
    """Write one sorted table file at ``path``.

    Keys must be added in strictly increasing bytewise order. The file exists (incomplete) from
    construction on; :meth:`finish` completes it, :meth:`abort` deletes it. As a context manager
    the writer aborts when the block is left without :meth:`finish` having succeeded, whether by
    an exception or not, so a half-written file never survives.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, block_size: int = DEFAULT_BLOCK_SIZE
    ) -> None:
        """Create (or truncate) the file. Raises InvalidArgument for a non-positive block size
        and StorageError if the file cannot be created."""
        if block_size <= 0:
            raise InvalidArgument(f"block_size must be positive, got {block_size}")
        self._path = os.fspath(path)
        self._last: bytes | None = None
        self._entries = 0
        self._finished = False
        writer = SstFileWriter(options=table_options(block_size))
        try:
            writer.open(self._path)
        except Exception as exc:  # rocksdict raises plain Exception
            raise StorageError(f"cannot create sstable {self._path}: {exc}") from exc
        self._writer: SstFileWriter | None = writer

    @property
    def path(self) -> str:
        """Where the file is written."""
        return self._path

    @property
    def entries(self) -> int:
        """Number of entries added so far."""
        return self._entries

    def add(self, key: bytes, value: bytes) -> None:
        """Append one entry. Raises InvalidArgument if ``key`` is not strictly greater than the
        previous key or either argument is not ``bytes`` (the writer stays usable), and
        StorageError once the writer is finished or aborted."""
        writer = self._writer
        if writer is None:
            raise StorageError(f"sstable writer for {self._path} is closed")
        if type(key) is not bytes or type(value) is not bytes:
            raise InvalidArgument("sstable keys and values must be bytes")
        last = self._last
        if last is not None and key <= last:
            raise InvalidArgument(f"sstable keys out of order: {key!r} after {last!r}")
        try:
            writer[key] = value
        except Exception as exc:
            raise StorageError(f"writing sstable {self._path} failed: {exc}") from exc
        self._last = key
        self._entries += 1

    def add_many(self, keys: list[bytes], values: list[bytes]) -> None:
        """:meth:`add` of every pair, the checks done once for the batch (same errors)."""
        writer = self._writer
        if writer is None:
            raise StorageError(f"sstable writer for {self._path} is closed")
        kinds = {*map(type, keys), *map(type, values)}
        if len(keys) != len(values) or kinds - {bytes}:
            raise InvalidArgument("sstable keys and values must be bytes, as many of each")
        if not keys:
            return
        previous = [self._last, *keys[:-1]] if self._last is not None else keys[:-1]
        following = keys if self._last is not None else keys[1:]
        if not all(map(lt, previous, following)):
            raise InvalidArgument("sstable keys out of order")
        try:
            for key, value in zip(keys, values, strict=True):
                writer[key] = value
        except Exception as exc:
            raise StorageError(f"writing sstable {self._path} failed: {exc}") from exc
        self._last = keys[-1]
        self._entries += len(keys)

    def finish(self) -> int:
        """Complete the file and return its size in bytes.

        RocksDB cannot write a table without entries: with zero entries the writer aborts
        (deleting the file) and raises InvalidArgument. Raises StorageError if the writer is
        already closed or RocksDB fails (the file is then deleted too).
        """
        writer = self._writer
        if writer is None:
            raise StorageError(f"sstable writer for {self._path} is closed")
        if self._entries == 0:
            self.abort()
            raise InvalidArgument("cannot finish an sstable with no entries")
        try:
            writer.finish()
            size = os.path.getsize(self._path)
        except Exception as exc:
            self.abort()
            raise StorageError(f"finishing sstable {self._path} failed: {exc}") from exc
        self._writer = None
        self._finished = True
        return size

    def abort(self) -> None:
        """Close the writer and delete the partial file. Idempotent; a no-op after a
        successful :meth:`finish` (the finished file is kept)."""
        if self._writer is None:
            return
        self._writer = None  # dropping the rocksdict writer closes its file handle
        if not self._path.startswith(_FD_PATH):  # a memory file goes with its descriptor
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._path)

    def __enter__(self) -> SstWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._finished:
            self.abort()


_FD_PATH = "/proc/self/fd/"


def table_bytes(keys: list[bytes], values: list[bytes], scratch_dir: str) -> bytes:
    """The complete table of ``keys``/``values`` (as :meth:`SstWriter.add_many` takes them),
    as bytes.

    RocksDB's writer flushes the file it finishes to the device and drops its cached pages.
    Where the bytes are stored elsewhere afterwards that flush buys nothing and costs a device
    round trip, so on Linux the table is built in an anonymous memory file (``memfd_create``),
    where flushing is free; elsewhere in a temporary file under ``scratch_dir``, deleted after.
    Raises InvalidArgument (bad or unordered entries, none at all) and StorageError."""
    if hasattr(os, "memfd_create") and os.path.isdir(_FD_PATH):
        fd = os.memfd_create("graveler-sstable", os.MFD_CLOEXEC)
        try:
            size = _write_table(_FD_PATH + str(fd), keys, values)
            data = os.pread(fd, size, 0)
            if len(data) != size:
                raise StorageError(f"reading back a {size}-byte sstable gave {len(data)} bytes")
            return data
        finally:
            os.close(fd)
    fd, path = tempfile.mkstemp(dir=scratch_dir, prefix=".tmp-", suffix=".sst")
    os.close(fd)
    try:
        _write_table(path, keys, values)
        with open(path, "rb") as fh:
            return fh.read()
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _write_table(path: str, keys: list[bytes], values: list[bytes]) -> int:
    with SstWriter(path) as writer:
        writer.add_many(keys, values)
        return writer.finish()
