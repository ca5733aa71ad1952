"""Pure-Python reader of graveler sstables (RocksDB block-based tables, uncompressed).

The layout is described in :mod:`graveler.storage.sstable.format`. :meth:`SstReader.from_bytes`
checks the footer, metaindex, properties and index blocks up front; data blocks are verified against
their checksums the first time they are read. Every kind of damage surfaces as
:class:`~graveler.core.errors.CorruptFile` (or its subclass
:class:`~graveler.core.errors.UnsupportedFormat` for well-formed files using features this reader
does not implement); damaged data is never returned.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path

from graveler.core.errors import CorruptFile, UnsupportedFormat
from graveler.storage.sstable.format import (
    FOOTER_SIZE,
    PUT_TRAILER,
    TRAILER_SIZE,
    Footer,
    parse_delta_index_block,
    parse_footer,
    parse_handle,
    parse_meta_block,
    read_fixed32,
    read_varint,
    read_varint32,
    restart_array,
    verify_block,
)

_PROPERTIES_BLOCK = b"rocksdb.properties"
_INDEX_BLOCK = b"rocksdb.index"
_BYTEWISE = b"leveldb.BytewiseComparator"
_INDEX_TYPE = b"rocksdb.block.based.table.index.type"
_NUM_ENTRIES = "rocksdb.num.entries"
_Append = Callable[[bytes], None]  # ``list.append`` of a list of bytes
_UNSUPPORTED_IF_NONZERO = (
    b"rocksdb.deleted.keys",
    b"rocksdb.merge.operands",
    b"rocksdb.num.range-deletions",
)


class SstReader:
    """Read-only view of one table file held in memory.

    Construct with :meth:`from_bytes` or :meth:`open`. Keys are ``bytes`` in bytewise order,
    unique within a file. Safe to share between threads: the only mutable state is a per-block
    "checksum verified" flag, and a race on it merely verifies a block twice.
    """

    __slots__ = (
        "_data",
        "_footer",
        "_handles",
        "_index_keys",
        "_num_entries",
        "_verified",
        "properties",
    )

    def __init__(
        self,
        data: bytes,
        footer: Footer,
        properties: dict[str, bytes],
        index_keys: list[bytes],
        handles: list[tuple[int, int]],
    ) -> None:
        """Internal: use :meth:`from_bytes`, which validates every argument."""
        self._data = data
        self._footer = footer
        self.properties = properties
        self._num_entries = _int_property(properties, _NUM_ENTRIES)
        self._index_keys = index_keys
        self._handles = handles
        self._verified = bytearray(len(handles))

    # --- construction --------------------------------------------------------------------------

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> SstReader:
        """Parse and verify the footer, metaindex, properties and index of a whole file.

        Raises CorruptFile on any damage and UnsupportedFormat on unsupported features.
        """
        raw = bytes(data)
        footer = parse_footer(raw)
        meta_offset, meta_size = footer.metaindex_handle
        verify_block(raw, footer, meta_offset, meta_size, len(raw) - FOOTER_SIZE)
        metaindex = dict(parse_meta_block(raw, meta_offset, meta_size))
        properties = _read_properties(raw, footer, metaindex, meta_offset)
        index_handle = _index_handle(footer, metaindex)
        verify_block(raw, footer, index_handle[0], index_handle[1], meta_offset)
        index_keys, handles = _read_index(raw, index_handle, properties)
        return cls(raw, footer, properties, index_keys, handles)

    @classmethod
    def open(cls, path: str | Path) -> SstReader:
        """Read the file at ``path`` into memory and parse it like :meth:`from_bytes`."""
        return cls.from_bytes(Path(path).read_bytes())

    # --- metadata ------------------------------------------------------------------------------

    @property
    def num_entries(self) -> int:
        """Number of key/value pairs, from the ``rocksdb.num.entries`` property."""
        return self._num_entries

    @property
    def format_version(self) -> int:
        """The block-based table format version declared in the footer."""
        return self._footer.format_version

    @property
    def checksum_type(self) -> int:
        """RocksDB checksum type code of the blocks (4 = XXH3)."""
        return self._footer.checksum_type

    @property
    def num_blocks(self) -> int:
        """Number of data blocks."""
        return len(self._handles)

    def __len__(self) -> int:
        return self.num_entries

    @property
    def data(self) -> bytes:
        """The whole file."""
        return self._data

    @property
    def base_context_checksum(self) -> int:
        """The footer's base context checksum (0 before format version 6)."""
        return self._footer.base_context_checksum

    def block_handles(self) -> tuple[list[tuple[int, int]], list[bytes]]:
        """The data blocks' ``(offset, size)`` handles and index keys (user keys), in order."""
        return self._handles, self._index_keys

    def verify_block(self, i: int) -> None:
        """Check data block ``i`` against its checksum (once per reader); CorruptFile."""
        self._block(i)

    # --- lookups -------------------------------------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        """The value stored under ``key``, or None. Reads (and verifies) at most one block."""
        i = bisect_left(self._index_keys, key)
        if i == len(self._index_keys):
            return None
        offset, size = self._block(i)
        data = self._data
        start, end = _restart_interval(data, offset, size, key)
        full_prev = b""  # linear scan of one restart interval, stopping at the first key >= key
        while start < end:
            user, value_start, start = _decode_entry(data, start, end, full_prev)
            if user >= key:
                return data[value_start:start] if user == key else None
            full_prev = user + PUT_TRAILER
        return None

    def seek_ge(self, key: bytes) -> Iterator[tuple[bytes, bytes]]:
        """Iterate ``(key, value)`` pairs in order from the first key ``>= key`` to the end."""
        first = bisect_left(self._index_keys, key)
        for i in range(first, len(self._handles)):
            keys, values = self._decode_block(i)
            start = bisect_left(keys, key) if i == first else 0
            yield from zip(keys[start:], values[start:], strict=True)

    def __iter__(self) -> Iterator[tuple[bytes, bytes]]:
        """Iterate all ``(key, value)`` pairs in key order, verifying blocks as they are read."""
        for i in range(len(self._handles)):
            keys, values = self._decode_block(i)
            yield from zip(keys, values, strict=True)

    def read_all(self) -> tuple[list[bytes], list[bytes]]:
        """Decode the whole file into ``(keys, values)``, verifying every block checksum and the
        entry count. This is the fast path for loading a file into memory."""
        keys: list[bytes] = []
        values: list[bytes] = []
        data = self._data
        add_key = keys.append
        add_value = values.append
        for i in range(len(self._handles)):
            offset, size = self._block(i)
            decode_entries(data, offset, restart_array(data, offset, size)[0], add_key, add_value)
        if len(keys) != self._num_entries:
            raise CorruptFile(f"file holds {len(keys)} entries, properties say {self._num_entries}")
        return keys, values

    # --- blocks --------------------------------------------------------------------------------

    def _block(self, i: int) -> tuple[int, int]:
        """Handle of data block ``i``, verified against its checksum (once per reader)."""
        handle = self._handles[i]
        if not self._verified[i]:
            verify_block(self._data, self._footer, handle[0], handle[1], len(self._data))
            self._verified[i] = 1
        return handle

    def _decode_block(self, i: int) -> tuple[list[bytes], list[bytes]]:
        """All keys and values of data block ``i``."""
        offset, size = self._block(i)
        keys: list[bytes] = []
        values: list[bytes] = []
        data = self._data
        decode_entries(
            data, offset, restart_array(data, offset, size)[0], keys.append, values.append
        )
        return keys, values


# --- data block decoding -----------------------------------------------------------------------


def decode_entries(
    data: bytes, start: int, limit: int, add_key: _Append, add_value: _Append
) -> None:
    """Append the user keys and values of the entries in ``data[start:limit]``, which must begin
    at a restart point of a verified data block and end at a restart point or the block's
    restart array.

    This is the hot loop of :meth:`SstReader.read_all`; it is deliberately flat (no per-entry
    calls besides the two appends). Each entry is three varint32s (shared, non_shared,
    value_length) whose 1-byte forms (and the 2-byte form of value_length) are decoded inline.
    ``prev`` is the previous *user* key; any entry shape other than the common one goes through
    :func:`_slow_key`. Raises CorruptFile / UnsupportedFormat on malformed entries.
    """
    trailer = PUT_TRAILER
    pos = start
    prev = b""
    prev_len = -1  # no previous key: the first entry must take the slow path with shared == 0
    while pos < limit:
        # Entry header: shared, non_shared, value_length (varint32 each; the restart array
        # after the entries guarantees these reads stay inside the block).
        shared = data[pos]
        non_shared = data[pos + 1]
        if (shared | non_shared) < 0x80:
            pos += 2
        else:
            shared, pos = read_varint32(data, pos, limit)
            non_shared, pos = read_varint32(data, pos, limit)
        value_len = data[pos]
        if value_len < 0x80:
            pos += 1
        elif data[pos + 1] < 0x80:
            value_len = (value_len & 0x7F) | (data[pos + 1] << 7)
            pos += 2
        else:
            value_len, pos = read_varint32(data, pos, limit)
        key_end = pos + non_shared
        value_end = key_end + value_len
        if value_end > limit:
            raise CorruptFile(f"entry overruns data block entries at {start}")
        # Common case: the key shares only user-key bytes of the previous key and its delta
        # ends with the 8-byte trailer, checked in place.
        if shared <= prev_len and non_shared >= 8:
            user_end = key_end - 8
            prev = prev[:shared] + data[pos:user_end]
            prev_len = shared + non_shared - 8
            if data[user_end:key_end] != trailer:
                raise UnsupportedFormat(f"entry is not a sequence-0 Put at {start}")
        else:
            prev = _slow_key(prev + trailer if prev_len >= 0 else b"", shared, data[pos:key_end])
            prev_len = len(prev)
        add_key(prev)
        add_value(data[key_end:value_end])
        pos = value_end


def _slow_key(full_prev: bytes, shared: int, delta: bytes) -> bytes:
    """User key of an entry given the previous *internal* key (``b""`` if none): handles keys
    sharing bytes of the previous key's trailer, and raises CorruptFile / UnsupportedFormat on
    malformed entries."""
    if shared > len(full_prev):
        raise CorruptFile("shared key prefix longer than the previous key")
    full = full_prev[:shared] + delta
    if len(full) < 8:
        raise CorruptFile("internal key shorter than its 8-byte trailer")
    if full[-8:] != PUT_TRAILER:
        raise UnsupportedFormat("entry is not a sequence-0 Put")
    return full[:-8]


def _decode_entry(data: bytes, pos: int, limit: int, full_prev: bytes) -> tuple[bytes, int, int]:
    """Decode one data-block entry at ``pos`` following internal key ``full_prev`` (``b""`` at a
    restart point); return ``(user key, value start, value end)``."""
    shared = data[pos]
    non_shared = data[pos + 1]
    value_len = data[pos + 2]
    if (shared | non_shared) < 0x80 and value_len < 0x80:
        pos += 3
    elif (shared | non_shared) < 0x80 and data[pos + 3] < 0x80:
        value_len = (value_len & 0x7F) | (data[pos + 3] << 7)
        pos += 4
    else:
        shared, pos = read_varint32(data, pos, limit)
        non_shared, pos = read_varint32(data, pos, limit)
        value_len, pos = read_varint32(data, pos, limit)
    key_end = pos + non_shared
    value_end = key_end + value_len
    if value_end > limit:
        raise CorruptFile("entry overruns its data block")
    return _slow_key(full_prev, shared, data[pos:key_end]), key_end, value_end


def _restart_interval(data: bytes, offset: int, size: int, key: bytes) -> tuple[int, int]:
    """``(start, end)`` of the restart interval of a verified data block that holds ``key`` if
    the block does: binary search for the last restart point whose key is ``<= key``."""
    limit, num_restarts = restart_array(data, offset, size)
    lo, hi = 0, num_restarts - 1
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if _restart_key(data, offset, limit, mid) <= key:
            lo = mid
        else:
            hi = mid - 1
    start = offset + read_fixed32(data, limit + 4 * lo)
    end = offset + read_fixed32(data, limit + 4 * lo + 4) if lo + 1 < num_restarts else limit
    if not offset <= start < end <= limit:
        raise CorruptFile(f"bad restart points in block at offset {offset}")
    return start, end


def _restart_key(data: bytes, offset: int, limit: int, index: int) -> bytes:
    """User key at restart point ``index`` of the block starting at ``offset``."""
    pos = offset + read_fixed32(data, limit + 4 * index)
    if pos >= limit:
        raise CorruptFile(f"restart point out of range in block at offset {offset}")
    key, _, _ = _decode_entry(data, pos, limit, b"")
    return key


# --- opening -----------------------------------------------------------------------------------


def _read_properties(
    data: bytes, footer: Footer, metaindex: dict[bytes, bytes], limit: int
) -> dict[str, bytes]:
    """Verify and decode the properties block; reject tables this reader cannot serve."""
    handle_bytes = metaindex.get(_PROPERTIES_BLOCK)
    if handle_bytes is None:
        raise CorruptFile("metaindex has no properties block")
    offset, size = parse_handle(handle_bytes)
    verify_block(data, footer, offset, size, limit)
    try:
        props = {k.decode(): v for k, v in parse_meta_block(data, offset, size)}
    except UnicodeDecodeError as exc:
        raise CorruptFile("property name is not UTF-8") from exc
    comparator = props.get("rocksdb.comparator", _BYTEWISE)
    if comparator != _BYTEWISE:
        raise UnsupportedFormat(f"comparator {comparator!r} is not bytewise")
    if props.get(_INDEX_TYPE.decode(), bytes(4)) != bytes(4):
        raise UnsupportedFormat("index type is not a plain binary-search index")
    for name in _UNSUPPORTED_IF_NONZERO:
        if _int_property(props, name.decode(), 0):
            raise UnsupportedFormat(f"table has {name.decode()}: only Puts are supported")
    _int_property(props, _NUM_ENTRIES)
    return props


def _index_handle(footer: Footer, metaindex: dict[bytes, bytes]) -> tuple[int, int]:
    """Where the index block is: in the footer before format version 6, else in the metaindex."""
    if footer.index_handle is not None:
        return footer.index_handle
    handle_bytes = metaindex.get(_INDEX_BLOCK)
    if handle_bytes is None:
        raise CorruptFile("metaindex has no index block")
    return parse_handle(handle_bytes)


def _read_index(
    data: bytes, handle: tuple[int, int], props: dict[str, bytes]
) -> tuple[list[bytes], list[tuple[int, int]]]:
    """Decode the verified index block into user-key separators and data block handles, and
    check that the data blocks tile the start of the file in order."""
    offset, size = handle
    if _int_property(props, "rocksdb.index.value.is.delta.encoded", 0):
        keys, handles = parse_delta_index_block(data, offset, size)
    else:
        entries = parse_meta_block(data, offset, size)
        keys = [k for k, _ in entries]
        handles = [parse_handle(v) for _, v in entries]
    if not _int_property(props, "rocksdb.index.key.is.user.key", 0):
        if any(len(k) < 8 for k in keys):
            raise CorruptFile("index key shorter than an internal-key trailer")
        keys = [k[:-8] for k in keys]
    expected = 0
    for block_offset, block_size in handles:
        if block_offset != expected:
            raise CorruptFile(f"data block at {block_offset}, expected one at {expected}")
        expected = block_offset + block_size + TRAILER_SIZE
    if expected > offset or any(a >= b for a, b in pairwise(keys)):
        raise CorruptFile("index block is inconsistent with the file layout")
    return keys, handles


def _int_property(props: dict[str, bytes], name: str, default: int | None = None) -> int:
    """A varint64 numeric property; ``default`` if absent (CorruptFile if absent and None)."""
    raw = props.get(name)
    if raw is None:
        if default is None:
            raise CorruptFile(f"missing table property {name}")
        return default
    value, pos = read_varint(raw, 0, len(raw))
    if pos != len(raw):
        raise CorruptFile(f"malformed numeric table property {name}")
    return value
