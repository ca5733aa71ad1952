"""Records of committed trees and their byte encodings.

A **range** file is an SST whose entries are the records of a key interval (its file layout,
v2 since the block-copying writer, is in :mod:`graveler.storage.committed.layout`):

* SST key   = the record key (raw bytes; trees are ordered bytewise).
* SST value = ``0x01`` (layout version) | uvarint(len(identity)) | identity | value

A **metarange** file is an SST with one entry per range, in key order:

* SST key   = the range's last (max) key
* SST value = ``0x01`` | uvarint(len(range_id)) | range_id (ASCII hex) |
  uvarint(len(min_key)) | min_key | u64be(count) | u64be(size)

File IDs are content addresses computed while writing. A metarange's, and a range's of layout
v1, is the SHA-256 of a kind tag followed by each entry framed as ``u32be(len(key))
u32be(len(value)) key value`` (see :class:`FileHasher`); a range's of layout v2 covers its
encoded entries (:func:`graveler.storage.committed.layout.range_id_v2`). Either covers keys,
identities *and* values, so a file whose decoded entries do not hash to its name is damaged
(or not ours) and is refused.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from collections.abc import Sequence
from itertools import repeat
from operator import add, itemgetter
from typing import NamedTuple

import xxhash

from graveler.core.errors import CorruptFile, UnsupportedFormat
from graveler.storage.sstable.builder import uvarint as _uvarint

LAYOUT_VERSION = 1
_VERSION_BYTE = bytes([LAYOUT_VERSION])
_FRAME = struct.Struct(">II")
_COUNTS = struct.Struct(">QQ")

RANGE_KIND = b"graveler:range:v1\n"
METARANGE_KIND = b"graveler:metarange:v1\n"


class ValueRecord(NamedTuple):
    """One committed entry. Two records are *the same* when key and identity are equal;
    ``value`` (the encoded object entry, e.g. its physical address) may differ."""

    key: bytes
    identity: bytes
    value: bytes


class RangeInfo(NamedTuple):
    """A metarange entry: where one range file lives and which keys it covers."""

    id: str
    min_key: bytes
    max_key: bytes
    num_records: int
    size: int  # bytes of encoded entries (keys + SST values), the splitter's measure


def encode_value(identity: bytes, value: bytes) -> bytes:
    """The SST value of a range entry."""
    n = len(identity)
    if n < 0x80:
        return _VERSION_BYTE + bytes((n,)) + identity + value
    return _VERSION_BYTE + _uvarint(n) + identity + value


def encode_values(records: Sequence[ValueRecord]) -> list[bytes]:
    """:func:`encode_value` of every record. When all identities have one short length (as
    object entries' SHA-256 identities do) the header is shared and the values are joined in
    C-level loops."""
    identities = list(map(itemgetter(1), records))
    lengths = set(map(len, identities))
    if len(lengths) == 1 and (n := lengths.pop()) < 0x80:
        heads = map(add, repeat(_VERSION_BYTE + bytes((n,))), identities)
        return list(map(add, heads, map(itemgetter(2), records)))
    return list(map(encode_value, identities, map(itemgetter(2), records)))


def decode_value(key: bytes, raw: bytes) -> ValueRecord:
    """Inverse of :func:`encode_value`; raises CorruptFile on malformed input."""
    if not raw or raw[0] != LAYOUT_VERSION:
        raise UnsupportedFormat(f"range entry {key!r}: unknown layout version")
    n, pos = _read_uvarint(raw, 1)
    end = pos + n
    if end > len(raw):
        raise CorruptFile(f"range entry {key!r}: identity runs past the value")
    return ValueRecord(key, raw[pos:end], raw[end:])


def decode_range_values(keys: list[bytes], raws: list[bytes]) -> list[ValueRecord]:
    """Decode a whole range's values (hot path: inlined 1-byte varint case)."""
    out: list[ValueRecord] = []
    append = out.append
    make = ValueRecord
    for key, raw in zip(keys, raws, strict=True):
        if len(raw) > 1 and raw[0] == 1 and raw[1] < 0x80:
            end = 2 + raw[1]
            if end <= len(raw):
                append(make(key, raw[2:end], raw[end:]))
                continue
        append(decode_value(key, raw))
    return out


def encode_range_info(info: RangeInfo) -> bytes:
    rid = info.id.encode("ascii")
    return (
        _VERSION_BYTE
        + _uvarint(len(rid))
        + rid
        + _uvarint(len(info.min_key))
        + info.min_key
        + _COUNTS.pack(info.num_records, info.size)
    )


def decode_range_info(max_key: bytes, raw: bytes) -> RangeInfo:
    if not raw or raw[0] != LAYOUT_VERSION:
        raise UnsupportedFormat("metarange entry: unknown layout version")
    try:
        n, pos = _read_uvarint(raw, 1)
        rid = sys.intern(raw[pos : pos + n].decode("ascii"))  # shared by every tree naming it
        pos += n
        n, pos = _read_uvarint(raw, pos)
        min_key = raw[pos : pos + n]
        pos += n
        num_records, size = _COUNTS.unpack_from(raw, pos)
    except (struct.error, UnicodeDecodeError) as exc:
        raise CorruptFile("metarange entry is malformed") from exc
    if pos + _COUNTS.size != len(raw) or len(rid) != 64 or min_key > max_key:
        raise CorruptFile("metarange entry is malformed")
    return RangeInfo(rid, min_key, max_key, num_records, size)


#: Bytes per record in :func:`record_fingerprints`.
FINGERPRINT_SIZE = 16


def record_fingerprints(keys: list[bytes], values: list[bytes]) -> bytes:
    """One 128-bit XXH3 fingerprint per entry (over key and SST value, seeded with the key's
    length so the split point is unambiguous), concatenated in entry order.

    Kept in RAM only, never written: diff compares two ranges' fingerprint strings with
    ``memcmp`` to skip runs of equal records without touching them (~0.1 us a record to build,
    amortised over every later comparison). Equal fingerprints stand for equal records; a
    collision would need two different entries to agree on 128 bits of XXH3."""
    return b"".join(map(xxhash.xxh3_128_digest, map(add, keys, values), map(len, keys)))


class FileHasher:
    """Computes a file ID while entries are written ("hash while writing, name on finish")."""

    __slots__ = ("_chunks", "_hash", "_pending")

    def __init__(self, kind: bytes) -> None:
        self._hash = hashlib.sha256(kind)
        self._chunks: list[bytes] = []
        self._pending = 0

    def add(self, key: bytes, value: bytes) -> None:
        self._chunks.append(_FRAME.pack(len(key), len(value)) + key + value)
        self._pending += 1
        if self._pending >= 4096:
            self._flush()

    def add_many(self, keys: list[bytes], values: list[bytes]) -> None:
        if len(keys) != len(values):
            raise ValueError("keys and values differ in number")
        frames = map(_FRAME.pack, map(len, keys), map(len, values))
        self._chunks.extend(map(add, map(add, frames, keys), values))
        self._flush()

    def hexdigest(self) -> str:
        self._flush()
        return self._hash.hexdigest()

    def _flush(self) -> None:
        if self._chunks:
            self._hash.update(b"".join(self._chunks))
            self._chunks.clear()
        self._pending = 0


def file_id(kind: bytes, keys: list[bytes], values: list[bytes]) -> str:
    """The content address of a file holding exactly these entries."""
    hasher = FileHasher(kind)
    hasher.add_many(keys, values)
    return hasher.hexdigest()


def _read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 35:
            raise CorruptFile("truncated or oversized varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
