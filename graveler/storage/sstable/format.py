"""On-disk layout of graveler sstables (= RocksDB block-based tables) and its low-level decoding.

Graveler stores committed data in files written by RocksDB's ``SstFileWriter`` (through
rocksdict) and reads them back with the pure-Python code in this package. "Graveler sstable
layout v1" is the RocksDB block-based table format with **no compression** and **XXH3 block
checksums**, as written by RocksDB 10.x at ``format_version`` 6. The reader also understands
footers of format versions 1 to 7 and the XXH32 / XXH64 checksum types; CRC32C, "no checksum"
and compressed blocks are rejected as :class:`~graveler.core.errors.UnsupportedFormat`.

All fixed-width integers are little-endian. A *varint* is LEB128 (7 bits per byte, low group
first, high bit set on every byte but the last); varint32 takes at most 5 bytes and varint64
at most 10. A *signed varint* is the zigzag encoding ``(v << 1) ^ (v >> 63)`` stored as a
varint64.

File
    ``[data block 0] ... [data block N-1] [index block] [properties block] [metaindex block]
    [footer]``. Every block is followed by a 5-byte *block trailer*. Data blocks start at
    offset 0 and follow each other without gaps.

Block handle
    ``varint64 offset, varint64 size``: where a block starts and how long it is, *excluding*
    its trailer.

Block trailer
    1 byte compression type (0 = none; anything else is unsupported here) and a fixed32
    checksum. The checksum covers the block contents plus the compression-type byte. For XXH3
    it is ``low32(XXH3_64(contents)) ^ ((type_byte * 0x6B9083D9) mod 2**32)``; for XXH32 it is
    ``XXH32(contents + type_byte)``; for XXH64 ``low32(XXH64(contents + type_byte))``.
    From format version 6 on, the stored value is that checksum *plus* (mod 2**32) a context
    modifier ``base_context_checksum ^ ((low32(offset) + high32(offset)) mod 2**32)`` where
    ``offset`` is the block's file offset: a block copied to a different place or from a
    different file fails verification.

Block contents
    A sequence of entries, then the *restart array* (``fixed32`` offsets of restart entries
    within the block), then ``fixed32 num_restarts``. The top 4 bits of that last word are
    feature flags (bit 31: data-block hash index, bit 28: separated key/value storage, ...);
    graveler writes none and rejects any. Each entry is ``varint32 shared, varint32 non_shared,
    varint32 value_length, key_delta[non_shared], value[value_length]``: the key is the first
    ``shared`` bytes of the previous key followed by ``key_delta`` (*key prefix compression*).
    At a *restart point* ``shared`` is 0, so binary search over the restart array finds the
    interval that may hold a key; the writer puts a restart point every 16 entries in data
    blocks and every entry in index blocks. Index blocks whose values are delta-encoded (table
    property ``rocksdb.index.value.is.delta.encoded`` = 1, format version >= 4) omit
    ``value_length``: the value is a full block handle when ``shared`` is 0 and otherwise a
    signed varint ``size - previous size``, the offset being ``previous offset + previous size +
    5``.

Keys
    Keys in data blocks are RocksDB *internal keys*: the user key followed by a fixed64
    ``(sequence << 8) | type``. ``SstFileWriter`` writes sequence 0 and type 1 (a Put), so every
    key ends with ``01 00 00 00 00 00 00 00``; the reader checks this trailer on every entry.
    Index keys are *separators*: for data block ``n``, a key ``y`` with ``last(n) <= y <
    first(n+1)``; they are user keys when the table property ``rocksdb.index.key.is.user.key`` is
    1 and internal keys otherwise. Keys are ordered bytewise (comparator
    ``leveldb.BytewiseComparator``).

Metaindex block
    A block (restart interval 1) mapping block names to handles: ``rocksdb.properties`` and, from
    format version 6, ``rocksdb.index``.

Properties block
    A block mapping property names (``rocksdb.num.entries``, ``rocksdb.comparator``, ...) to raw
    bytes. Numeric properties are varint64s; ``rocksdb.block.based.table.index.type`` is a
    fixed32 (0 = binary search, the only index type read here).

Footer (53 bytes, format version >= 1)
    ``checksum_type (1 byte)``, then 40 bytes of "part 2", then ``fixed32 format_version`` and
    the ``fixed64`` magic ``0x88E241B785F4CFF7``. Before version 6 part 2 is the metaindex handle
    and the index handle, zero-padded to 40 bytes. From version 6 it is the *extended magic*
    ``3E 00 7A 00``, ``fixed32 footer_checksum``, ``fixed32 base_context_checksum`` (nonzero),
    ``fixed32 metaindex_size`` (the metaindex block ends right before the footer, trailer
    included) and 24 reserved bytes of which the last 8 must be zero. The footer checksum is
    computed over the 53 footer bytes with the checksum field zeroed, plus the context modifier
    for the footer's offset.
"""

from __future__ import annotations

import struct
from typing import Final

import xxhash

from graveler.core.errors import CorruptFile, UnsupportedFormat

MAGIC: Final = 0x88E241B785F4CFF7
LEGACY_MAGIC: Final = 0xDB4775248B80FB57
FOOTER_SIZE: Final = 53
TRAILER_SIZE: Final = 5
MIN_FORMAT_VERSION: Final = 1
MAX_FORMAT_VERSION: Final = 7
EXTENDED_MAGIC: Final = b"\x3e\x00\x7a\x00"

CHECKSUM_NONE: Final = 0
CHECKSUM_CRC32C: Final = 1
CHECKSUM_XXHASH: Final = 2
CHECKSUM_XXHASH64: Final = 3
CHECKSUM_XXH3: Final = 4

#: Internal-key trailer of a Put at sequence number 0: ``(0 << 8) | 1`` as fixed64.
PUT_TRAILER: Final = b"\x01\x00\x00\x00\x00\x00\x00\x00"
#: Bits of a block's last word that are feature flags rather than the restart count.
RESTART_FLAG_MASK: Final = 0xF0000000

_MASK32: Final = 0xFFFFFFFF
_LAST_BYTE_PRIME: Final = 0x6B9083D9
_U32 = struct.Struct("<I")


# --- varints -----------------------------------------------------------------------------------


def read_varint(data: bytes, pos: int, limit: int, max_bytes: int = 10) -> tuple[int, int]:
    """Decode a varint at ``data[pos:limit]``; return ``(value, position after it)``.

    Raises CorruptFile if it runs past ``limit``, is longer than ``max_bytes`` bytes or decodes
    to a value of 2**64 or more.
    """
    result = 0
    shift = 0
    end = min(limit, pos + max_bytes)
    while pos < end:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result >> 64:
                raise CorruptFile("varint overflows 64 bits")
            return result, pos
        shift += 7
    raise CorruptFile(f"malformed varint at offset {pos}")


def read_varint32(data: bytes, pos: int, limit: int) -> tuple[int, int]:
    """Like :func:`read_varint` for a varint32 (at most 5 bytes, value below 2**32)."""
    value, pos = read_varint(data, pos, limit, 5)
    if value > _MASK32:
        raise CorruptFile("varint32 out of range")
    return value, pos


def read_signed_varint(data: bytes, pos: int, limit: int) -> tuple[int, int]:
    """Decode a zigzag-encoded signed varint64; return ``(value, position after it)``."""
    raw, pos = read_varint(data, pos, limit)
    return (raw >> 1) ^ -(raw & 1), pos


def read_fixed32(data: bytes, pos: int) -> int:
    """Little-endian uint32 at ``data[pos:pos + 4]`` (caller guarantees the bounds)."""
    value: int = _U32.unpack_from(data, pos)[0]
    return value


# --- checksums ---------------------------------------------------------------------------------


def context_modifier(base_context_checksum: int, offset: int) -> int:
    """The value added to a block checksum stored at ``offset`` (0 when the feature is off)."""
    if base_context_checksum == 0:
        return 0
    return base_context_checksum ^ (((offset & _MASK32) + (offset >> 32)) & _MASK32)


def block_checksum(checksum_type: int, data: bytes, start: int, end: int) -> int:
    """Checksum of ``data[start:end]`` whose last byte is the block's compression type byte."""
    view = memoryview(data)[start:end]
    if checksum_type == CHECKSUM_XXH3:
        if end == start:
            return 0
        low = xxhash.xxh3_64_intdigest(view[:-1]) & _MASK32
        return low ^ ((view[-1] * _LAST_BYTE_PRIME) & _MASK32)
    if checksum_type == CHECKSUM_XXHASH:
        return xxhash.xxh32_intdigest(view)
    if checksum_type == CHECKSUM_XXHASH64:
        return xxhash.xxh64_intdigest(view) & _MASK32
    raise UnsupportedFormat(f"unsupported checksum type {checksum_type}")


def check_checksum_type(checksum_type: int) -> None:
    """Raise unless block checksums of ``checksum_type`` can be verified here."""
    if checksum_type in (CHECKSUM_NONE, CHECKSUM_CRC32C):
        name = "none" if checksum_type == CHECKSUM_NONE else "crc32c"
        raise UnsupportedFormat(f"checksum type {name} is not supported (need an xxHash)")
    if checksum_type > CHECKSUM_XXH3:
        raise CorruptFile(f"unknown checksum type {checksum_type}")


# --- footer ------------------------------------------------------------------------------------


class Footer:
    """The decoded fixed-size tail of a table file.

    ``index_handle`` is None from format version 6 on (the index is found via the metaindex).
    """

    __slots__ = (
        "base_context_checksum",
        "checksum_type",
        "format_version",
        "index_handle",
        "metaindex_handle",
    )

    def __init__(
        self,
        format_version: int,
        checksum_type: int,
        base_context_checksum: int,
        metaindex_handle: tuple[int, int],
        index_handle: tuple[int, int] | None,
    ) -> None:
        self.format_version = format_version
        self.checksum_type = checksum_type
        self.base_context_checksum = base_context_checksum
        self.metaindex_handle = metaindex_handle
        self.index_handle = index_handle


def parse_footer(data: bytes) -> Footer:
    """Decode and verify the footer at the end of ``data`` (the whole file).

    Raises CorruptFile for a short file, bad magic or a footer checksum mismatch, and
    UnsupportedFormat for a legacy magic, unknown format version or unverifiable checksum type.
    """
    size = len(data)
    if size < FOOTER_SIZE:
        raise CorruptFile(f"file of {size} bytes is too short to be an sstable")
    magic = int.from_bytes(data[-8:], "little")
    if magic == LEGACY_MAGIC:
        raise UnsupportedFormat("legacy block-based table format (version 0)")
    if magic != MAGIC:
        raise CorruptFile(f"bad table magic number {magic:#018x}")
    version = read_fixed32(data, size - 12)
    if not MIN_FORMAT_VERSION <= version <= MAX_FORMAT_VERSION:
        raise UnsupportedFormat(f"unsupported block-based table format version {version}")
    footer_offset = size - FOOTER_SIZE
    checksum_type = data[footer_offset]
    check_checksum_type(checksum_type)
    if version >= 6:
        return _parse_footer_v6(data, footer_offset, version, checksum_type)
    pos = footer_offset + 1
    end = size - 12
    meta_offset, pos = read_varint(data, pos, end)
    meta_size, pos = read_varint(data, pos, end)
    index_offset, pos = read_varint(data, pos, end)
    index_size, pos = read_varint(data, pos, end)
    return Footer(version, checksum_type, 0, (meta_offset, meta_size), (index_offset, index_size))


def _parse_footer_v6(data: bytes, footer_offset: int, version: int, checksum_type: int) -> Footer:
    """Decode part 2 of a format version >= 6 footer, verifying the footer checksum."""
    part2 = footer_offset + 1
    if data[part2 : part2 + 4] != EXTENDED_MAGIC:
        raise CorruptFile("bad extended magic number in footer")
    stored = read_fixed32(data, part2 + 4)
    base = read_fixed32(data, part2 + 8)
    meta_size = read_fixed32(data, part2 + 12)
    if base == 0:
        raise CorruptFile("invalid base context checksum 0")
    footer = bytearray(data[footer_offset:])
    footer[5:9] = b"\x00\x00\x00\x00"
    computed = block_checksum(checksum_type, bytes(footer), 0, FOOTER_SIZE)
    if (computed + context_modifier(base, footer_offset)) & _MASK32 != stored:
        raise CorruptFile(f"footer checksum mismatch at offset {footer_offset}")
    if data[part2 + 32 : part2 + 40] != bytes(8):
        raise UnsupportedFormat("footer uses a reserved feature")
    meta_offset = footer_offset - TRAILER_SIZE - meta_size
    if meta_offset < 0:
        raise CorruptFile("metaindex block size exceeds the file")
    return Footer(version, checksum_type, base, (meta_offset, meta_size), None)


# --- blocks ------------------------------------------------------------------------------------


def verify_block(data: bytes, footer: Footer, offset: int, size: int, limit: int) -> None:
    """Check that block ``(offset, size)`` lies within ``data[:limit]``, is uncompressed and
    matches its checksum. Raises CorruptFile or UnsupportedFormat."""
    end = offset + size
    if offset < 0 or size < 4 or end + TRAILER_SIZE > limit:
        raise CorruptFile(f"block handle ({offset}, {size}) out of bounds")
    stored = read_fixed32(data, end + 1)
    computed = block_checksum(footer.checksum_type, data, offset, end + 1)
    modifier = context_modifier(footer.base_context_checksum, offset)
    if (computed + modifier) & _MASK32 != stored:
        raise CorruptFile(f"block checksum mismatch at offset {offset}")
    if data[end] != 0:
        raise UnsupportedFormat(f"compressed block (type {data[end]}) at offset {offset}")


def restart_array(data: bytes, offset: int, size: int) -> tuple[int, int]:
    """Return ``(entries_end, num_restarts)`` for a verified block: ``entries_end`` is the
    absolute offset where the entries stop and the restart array begins."""
    packed = read_fixed32(data, offset + size - 4)
    if packed & RESTART_FLAG_MASK:
        raise UnsupportedFormat(f"block at offset {offset} uses unsupported features")
    if packed == 0 or 4 + 4 * packed > size:
        raise CorruptFile(f"bad restart count {packed} in block at offset {offset}")
    return offset + size - 4 - 4 * packed, packed


def parse_meta_block(data: bytes, offset: int, size: int) -> list[tuple[bytes, bytes]]:
    """Decode every ``(key, value)`` of a verified block with explicit value lengths (metaindex,
    properties, full-value index blocks). Keys are returned as stored (no trailer removal)."""
    limit, _ = restart_array(data, offset, size)
    pos = offset
    key = b""
    out: list[tuple[bytes, bytes]] = []
    while pos < limit:
        shared, pos = read_varint32(data, pos, limit)
        non_shared, pos = read_varint32(data, pos, limit)
        value_len, pos = read_varint32(data, pos, limit)
        key_end = pos + non_shared
        value_end = key_end + value_len
        if shared > len(key) or value_end > limit:
            raise CorruptFile(f"malformed entry in block at offset {offset}")
        key = key[:shared] + data[pos:key_end]
        out.append((key, data[key_end:value_end]))
        pos = value_end
    return out


def parse_handle(value: bytes) -> tuple[int, int]:
    """Decode a value that must be exactly one block handle."""
    offset, pos = read_varint(value, 0, len(value))
    size, pos = read_varint(value, pos, len(value))
    if pos != len(value):
        raise CorruptFile("trailing bytes after block handle")
    return offset, size


def parse_delta_index_block(
    data: bytes, offset: int, size: int
) -> tuple[list[bytes], list[tuple[int, int]]]:
    """Decode a verified index block whose values are delta-encoded handles (no value lengths).

    Returns the separator keys (as stored) and the block handles.
    """
    limit, _ = restart_array(data, offset, size)
    pos = offset
    key = b""
    keys: list[bytes] = []
    handles: list[tuple[int, int]] = []
    prev_offset = prev_size = 0
    while pos < limit:
        shared, pos = read_varint32(data, pos, limit)
        non_shared, pos = read_varint32(data, pos, limit)
        key_end = pos + non_shared
        if shared > len(key) or key_end > limit:
            raise CorruptFile(f"malformed index entry in block at offset {offset}")
        key = key[:shared] + data[pos:key_end]
        pos = key_end
        if shared == 0:
            prev_offset, pos = read_varint(data, pos, limit)
            prev_size, pos = read_varint(data, pos, limit)
        elif not handles:
            raise CorruptFile("first index entry is delta-encoded")
        else:
            delta, pos = read_signed_varint(data, pos, limit)
            prev_offset, prev_size = prev_offset + prev_size + TRAILER_SIZE, prev_size + delta
        keys.append(key)
        handles.append((prev_offset, prev_size))
    return keys, handles
