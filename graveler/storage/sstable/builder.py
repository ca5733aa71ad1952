"""Building RocksDB block-based tables in Python, a block at a time ("graveler sstable layout
v2").

The files are the same kind RocksDB's ``SstFileWriter`` writes (format version 6, no
compression, XXH3 checksums, a binary-search index of user keys whose values are
delta-encodable handles; see :mod:`graveler.storage.sstable.format`), with two differences that make
a table cheap to rebuild from another one:

* **Entries are stored whole**: no key prefix compression (``shared`` is always 0). An entry
  is ``0x00 varint(len(key) + 8) varint(len(value)) key PUT_TRAILER value``, a pure function
  of its record, so a block's bytes depend only on the entries in it, and the entries of many
  records are encoded with C-level loops.
* **Blocks are placed by the caller**, who decides where they end. A block of another table
  can be copied into a new one as bytes (:meth:`TableBuilder.copy`): only its 5-byte trailer
  is recomputed, because from format version 6 on a stored checksum depends on the block's
  offset and the file's base context checksum.

Restart points fall every :data:`RESTART_INTERVAL` entries. The file's bytes are a pure
function of its blocks and ``base_context_checksum``: the creation time is 0 and the
identities are fixed, so the same blocks always give the same file.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from itertools import accumulate, chain, islice, repeat
from operator import add
from typing import NamedTuple

import xxhash

from graveler.storage.sstable.format import (
    CHECKSUM_XXH3,
    EXTENDED_MAGIC,
    FOOTER_SIZE,
    MAGIC,
    PUT_TRAILER,
    TRAILER_SIZE,
    context_modifier,
    read_fixed32,
)

RESTART_INTERVAL = 16
TABLE_FORMAT_VERSION = 6
_MASK32 = 0xFFFFFFFF
_LAST_BYTE_PRIME = 0x6B9083D9
_SMALL = 1 << 14  # lengths below this have a precomputed varint
_U32 = struct.Struct("<I")
_TRAILER = struct.Struct("<BI")  # compression type, checksum


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


#: uvarint(i) for i < _SMALL: one byte below 128, else the low 7 bits flagged, then the rest
#: (built a byte pair at a time: every process that reads a tree imports this module).
_VARINT = (
    *(bytes((i,)) for i in range(128)),
    *(bytes((low | 0x80, high)) for high in range(1, _SMALL >> 7) for low in range(128)),
)


def uvarint(n: int) -> bytes:
    """LEB128 encoding of a non-negative integer."""
    return _VARINT[n] if n < _SMALL else _uvarint(n)


#: b"\x00" + uvarint(i + 8): an entry's shared-bytes 0, then its key's length with the trailer.
_VARINT_KEY = tuple(b"\x00" + v for v in (*_VARINT[8:], *map(_uvarint, range(_SMALL, _SMALL + 8))))


def _head_key(n: int) -> bytes:
    return _VARINT_KEY[n] if n < _SMALL else b"\x00" + uvarint(n + 8)


def _head_value(n: int) -> bytes:
    return _VARINT[n] if n < _SMALL else uvarint(n)


def entry_sizes(keys: Sequence[bytes], values: Sequence[bytes]) -> list[int]:
    """The encoded size of each entry (see the module docstring)."""
    klens = list(map(len, keys))
    vlens = list(map(len, values))
    heads = map(add, map(len, map(_head_key, klens)), map(len, map(_head_value, vlens)))
    return list(map(add, heads, map(add, klens, map(add, vlens, repeat(8)))))


class BlockContents(NamedTuple):
    """A data block as stored before its trailer: entries, then the restart array."""

    data: bytes
    entries_end: int  # where the entries stop (the rest is the restart array)


def encode_block(
    keys: Sequence[bytes], values: Sequence[bytes], sizes: Sequence[int]
) -> BlockContents:
    """The block holding these entries (``sizes`` from :func:`entry_sizes`)."""
    heads = map(add, map(_head_key, map(len, keys)), map(_head_value, map(len, values)))
    entries = b"".join(chain.from_iterable(zip(heads, keys, repeat(PUT_TRAILER), values)))
    starts = list(islice(accumulate(sizes, initial=0), 0, len(sizes), RESTART_INTERVAL))
    restarts = struct.pack(f"<{len(starts) + 1}I", *starts, len(starts))
    return BlockContents(entries + restarts, len(entries))


def restart_count(data: bytes | memoryview, offset: int, size: int) -> int:
    """The number of restart points of the block ``(offset, size)`` of ``data``."""
    return read_fixed32(data, offset + size - 4)  # type: ignore[arg-type]


class _Placed(NamedTuple):
    pieces: tuple[bytes | memoryview, ...]  # contents (maybe a view of another file), trailer
    size: int  # contents size


class TableBuilder:
    """Assembles one table from blocks in key order (:meth:`add`, :meth:`copy`), then writes
    the index, properties, metaindex and footer (:meth:`finish`)."""

    def __init__(self, base_context_checksum: int) -> None:
        """``base_context_checksum`` must be a nonzero 32-bit value."""
        if not 0 < base_context_checksum <= _MASK32:
            raise ValueError("the base context checksum must be a nonzero 32-bit value")
        self._base = base_context_checksum
        self._blocks: list[_Placed] = []
        self._last_keys: list[bytes] = []
        self._offset = 0

    @property
    def offset(self) -> int:
        """Where the next block starts."""
        return self._offset

    @property
    def base(self) -> int:
        """The base context checksum the file is written with."""
        return self._base

    def handles(self) -> list[tuple[int, int]]:
        """The ``(offset, size)`` of each data block placed so far."""
        at = 0
        out = []
        for placed in self._blocks:
            out.append((at, placed.size))
            at += placed.size + TRAILER_SIZE
        return out

    def add(self, contents: bytes, last_key: bytes) -> None:
        """Append a block built by :func:`encode_block`; ``last_key`` is its last user key."""
        raw = xxhash.xxh3_64_intdigest(contents) & _MASK32  # type byte 0: nothing to mix in
        self._place((contents,), raw, len(contents), last_key)

    def copy(
        self,
        source: bytes,
        handles: Sequence[tuple[int, int]],
        source_base: int,
        last_keys: Sequence[bytes],
    ) -> None:
        """Append the blocks ``handles`` of another table (``source``, whose footer's base
        context checksum is ``source_base``) as they are; ``last_keys`` are their last user
        keys. The blocks must have been verified."""
        view = memoryview(source)
        for (offset, size), last_key in zip(handles, last_keys, strict=True):
            stored = _U32.unpack_from(source, offset + size + 1)[0]
            raw = (stored - context_modifier(source_base, offset)) & _MASK32
            self._place((view[offset : offset + size],), raw, size, last_key)

    def _place(
        self, pieces: tuple[bytes | memoryview, ...], raw: int, size: int, last_key: bytes
    ) -> None:
        stored = (raw + context_modifier(self._base, self._offset)) & _MASK32
        trailer = _TRAILER.pack(0, stored)
        self._blocks.append(_Placed((*pieces, trailer), size))
        self._last_keys.append(last_key)
        self._offset += size + TRAILER_SIZE

    def finish(self, properties: dict[bytes, bytes]) -> bytes:
        """The whole file. ``properties`` are added to the ones RocksDB's writer records
        (which the caller gives the counts of: see :func:`table_properties`)."""
        out: list[bytes | memoryview] = [p for placed in self._blocks for p in placed.pieces]
        index_at = self._offset
        handles = [_handle(offset, size) for offset, size in self.handles()]
        index = _block(list(zip(self._last_keys, handles, strict=True)), values=False)
        out += self._sealed(index, index_at)
        props_at = index_at + len(index) + TRAILER_SIZE
        props = dict(properties)
        props[b"rocksdb.data.size"] = uvarint(index_at)
        props[b"rocksdb.tail.start.offset"] = uvarint(index_at)
        props[b"rocksdb.index.size"] = uvarint(len(index) + TRAILER_SIZE)
        props[b"rocksdb.num.data.blocks"] = uvarint(len(self._blocks))
        block = _block(sorted(props.items()), values=True)
        out += self._sealed(block, props_at)
        meta_at = props_at + len(block) + TRAILER_SIZE
        meta_entries = [
            (b"rocksdb.index", _handle(index_at, len(index))),
            (b"rocksdb.properties", _handle(props_at, len(block))),
        ]
        meta = _block(meta_entries, values=True)
        out += self._sealed(meta, meta_at)
        out.append(self._footer(meta_at + len(meta) + TRAILER_SIZE, len(meta)))
        return b"".join(out)

    def _sealed(self, contents: bytes, offset: int) -> list[bytes]:
        raw = xxhash.xxh3_64_intdigest(contents) & _MASK32
        stored = (raw + context_modifier(self._base, offset)) & _MASK32
        return [contents, b"\x00" + struct.pack("<I", stored)]

    def _footer(self, offset: int, meta_size: int) -> bytes:
        part = bytearray(FOOTER_SIZE)
        part[0] = CHECKSUM_XXH3
        part[1:5] = EXTENDED_MAGIC
        struct.pack_into("<II", part, 9, self._base, meta_size)
        struct.pack_into("<IQ", part, FOOTER_SIZE - 12, TABLE_FORMAT_VERSION, MAGIC)
        low = xxhash.xxh3_64_intdigest(bytes(part[:-1])) & _MASK32
        checksum = low ^ ((part[-1] * _LAST_BYTE_PRIME) & _MASK32)
        struct.pack_into("<I", part, 5, (checksum + context_modifier(self._base, offset)) & _MASK32)
        return bytes(part)


def table_properties(entries: int, key_bytes: int, value_bytes: int) -> dict[bytes, bytes]:
    """The properties RocksDB's ``SstFileWriter`` records for a table of ``entries`` Puts whose
    user keys and values take ``key_bytes`` and ``value_bytes`` (sizes and block counts are
    added by :meth:`TableBuilder.finish`)."""
    zero = b"\x00"
    return {
        b"rocksdb.block.based.table.index.type": bytes(4),
        b"rocksdb.block.based.table.prefix.filtering": b"0",
        b"rocksdb.block.based.table.whole.key.filtering": b"1",
        b"rocksdb.column.family.id": uvarint(0x7FFFFFFF),
        b"rocksdb.comparator": b"leveldb.BytewiseComparator",
        b"rocksdb.compression": b"NoCompression",
        b"rocksdb.compression_options": (
            b"window_bits=-14; level=32767; strategy=0; max_dict_bytes=0; "
        ),
        b"rocksdb.creating.db.identity": b"SST Writer",
        b"rocksdb.creating.host.identity": b"graveler",
        b"rocksdb.creating.session.identity": b"GRAVELERSSTLAYOUTV20",
        b"rocksdb.creation.time": zero,
        b"rocksdb.deleted.keys": zero,
        b"rocksdb.external_sst_file.global_seqno": bytes(8),
        b"rocksdb.external_sst_file.version": struct.pack("<I", 2),
        b"rocksdb.filter.size": zero,
        b"rocksdb.fixed.key.length": zero,
        b"rocksdb.format.version": uvarint(TABLE_FORMAT_VERSION),
        b"rocksdb.index.key.is.user.key": b"\x01",
        b"rocksdb.index.value.is.delta.encoded": b"\x01",
        b"rocksdb.key.largest.seqno": zero,
        b"rocksdb.merge.operands": zero,
        b"rocksdb.merge.operator": b"nullptr",
        b"rocksdb.num.entries": uvarint(entries),
        b"rocksdb.num.filter_entries": zero,
        b"rocksdb.num.range-deletions": zero,
        b"rocksdb.oldest.key.time": zero,
        b"rocksdb.original.file.number": b"\x01",
        b"rocksdb.prefix.extractor.name": b"nullptr",
        b"rocksdb.property.collectors": b"[]",
        b"rocksdb.raw.key.size": uvarint(key_bytes + 8 * entries),
        b"rocksdb.raw.value.size": uvarint(value_bytes),
    }


def _handle(offset: int, size: int) -> bytes:
    return uvarint(offset) + uvarint(size)


def _block(items: list[tuple[bytes, bytes]], *, values: bool) -> bytes:
    """A block with a restart point at every entry (index and meta blocks). ``values``: each
    entry records its value's length (meta blocks); else not (an index whose values are
    delta-encodable handles, every one written in full)."""
    out = bytearray()
    starts = []
    for key, value in items:
        starts.append(len(out))
        out += b"\x00" + uvarint(len(key))
        if values:
            out += uvarint(len(value))
        out += key + value
    return bytes(out) + struct.pack(f"<{len(starts) + 1}I", *starts, len(starts))


#: Bytes of entries a block of :func:`table_bytes` holds at most (one entry may exceed it).
BLOCK_BYTES = 16 * 1024


def table_bytes(keys: list[bytes], values: list[bytes], base_context_checksum: int) -> bytes:
    """A whole table of these entries (keys strictly increasing), in blocks of about
    :data:`BLOCK_BYTES`: for files that are written whole and never rebuilt from their
    blocks (metaranges)."""
    if not keys or len(keys) != len(values):
        raise ValueError("a table needs as many values as keys, and at least one entry")
    sizes = entry_sizes(keys, values)
    builder = TableBuilder(base_context_checksum)
    start = total = 0
    for i, size in enumerate(sizes):
        total += size
        if total >= BLOCK_BYTES or i == len(sizes) - 1:
            block = encode_block(keys[start : i + 1], values[start : i + 1], sizes[start : i + 1])
            builder.add(block.data, keys[i])
            start, total = i + 1, 0
    props = table_properties(len(keys), sum(map(len, keys)), sum(map(len, values)))
    return builder.finish(props)
