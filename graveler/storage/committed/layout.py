"""Range files of graveler tree layout v2: built a block at a time, rebuilt by copying blocks.

A v2 range file is a RocksDB table written by :mod:`graveler.storage.sstable.builder` (entries
stored whole, blocks cut by :class:`~graveler.storage.committed.splitter.Splitter`) whose properties
also hold

* ``graveler.layout`` = ``2``;
* ``graveler.blocks``: for each data block, ``uvarint(entries) uvarint(key bytes)
  uvarint(value bytes)`` (user keys and SST values), so a block can be copied into another
  range, and its records found in a decoded range, without decoding it.

Its ID is a two-level hash: the SHA-256 of :data:`RANGE_KIND_V2` followed by, for every data
block in order, the SHA-256 of the block's entries (its bytes up to its restart array).
Entries are a pure function of their records and blocks are cut by a rule over the records,
so the ID is a pure function of the range's records, as in layout v1; a copied block brings
its digest along, so a range rebuilt from copied blocks hashes only its new ones. Decoding a
file recomputes every digest and the ID, and checks the block table against what the blocks
hold.

Files of layout v1 (written by RocksDB's own writer, ID over framed records) stay readable;
a range of either layout that a commit touches is written in layout v2.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import NamedTuple

import xxhash

from graveler.core.errors import CorruptFile
from graveler.storage.sstable.builder import restart_count, uvarint
from graveler.storage.sstable.format import read_varint
from graveler.storage.sstable.reader import SstReader, decode_entries

RANGE_KIND_V2 = b"graveler:range:v2\n"
LAYOUT_PROPERTY = "graveler.layout"
BLOCKS_PROPERTY = "graveler.blocks"
LAYOUT_V2 = b"2"


class BlockInfo(NamedTuple):
    """What a data block holds: its number of entries and the bytes of their user keys and
    SST values."""

    entries: int
    key_bytes: int
    value_bytes: int


def encode_block_table(infos: Sequence[BlockInfo]) -> bytes:
    """The ``graveler.blocks`` property of a file with these blocks."""
    return b"".join(uvarint(n) for info in infos for n in info)


def decode_block_table(raw: bytes, blocks: int) -> list[BlockInfo]:
    """Inverse of :func:`encode_block_table` for a file of ``blocks`` data blocks."""
    numbers = []
    pos = 0
    while pos < len(raw):
        value, pos = read_varint(raw, pos, len(raw))
        numbers.append(value)
    if len(numbers) != 3 * blocks:
        raise CorruptFile(f"block table lists {len(numbers) // 3} blocks, the file has {blocks}")
    return [BlockInfo(*numbers[i : i + 3]) for i in range(0, len(numbers), 3)]


class RangeLayout:
    """The data blocks of a v2 range file: where each lies, its last key and what it holds.

    ``data`` is the whole file, every data block of it verified (checksums, ID)."""

    __slots__ = (
        "_hashes",
        "base",
        "data",
        "digests",
        "handles",
        "infos",
        "last_keys",
        "sizes",
        "starts",
    )

    def __init__(
        self,
        data: bytes,
        base: int,
        handles: Sequence[tuple[int, int]],
        last_keys: Sequence[bytes],
        infos: Sequence[BlockInfo],
        sizes: Sequence[int],
        digests: Sequence[bytes],
    ) -> None:
        self.data = data
        self.base = base  # the footer's base context checksum
        self.handles = handles
        self.last_keys = last_keys
        self.infos = infos
        #: Encoded bytes of each block's entries (where its restart array begins).
        self.sizes = sizes
        #: The SHA-256 of each block's entries (see the module docstring).
        self.digests = digests
        #: Index of each block's first record in the range (and the total at the end).
        self.starts = list(accumulate((info.entries for info in infos), initial=0))
        self._hashes: list[int] | None = None

    def __len__(self) -> int:
        return len(self.handles)

    @property
    def hashes(self) -> list[int]:
        """The hash of each block's last key (what the cut rules test)."""
        if self._hashes is None:
            self._hashes = list(map(xxhash.xxh64_intdigest, self.last_keys))
        return self._hashes

    def entries_size(self) -> int:
        """The encoded bytes of every block's entries (the range rule's measure)."""
        return sum(self.sizes)


def entries_end(data: bytes, offset: int, size: int) -> int:
    """Where the entries of the verified block ``(offset, size)`` stop, relative to its
    start."""
    return size - 4 - 4 * restart_count(data, offset, size)


def block_digest(entries: bytes | memoryview) -> bytes:
    """The digest of one block's entries."""
    return hashlib.sha256(entries).digest()


def range_id_v2(digests: Iterable[bytes]) -> str:
    """The ID of a v2 range whose blocks' entries have these digests, in order."""
    return hashlib.sha256(RANGE_KIND_V2 + b"".join(digests)).hexdigest()


def is_v2(reader: SstReader) -> bool:
    return reader.properties.get(LAYOUT_PROPERTY) == LAYOUT_V2


def decode_v2(fid: str, reader: SstReader) -> tuple[list[bytes], list[bytes], RangeLayout]:
    """Every key and SST value of a v2 range file, and its layout; CorruptFile unless the
    entries hash to ``fid`` and the block table matches the blocks."""
    handles, last_keys = reader.block_handles()
    raw = reader.properties.get(BLOCKS_PROPERTY)
    if raw is None:
        raise CorruptFile(f"tree file {fid}: layout 2 without a block table")
    infos = decode_block_table(raw, len(handles))
    data = reader.data
    keys: list[bytes] = []
    values: list[bytes] = []
    sizes: list[int] = []
    digests: list[bytes] = []
    for i, info in enumerate(infos):
        reader.verify_block(i)
        offset, size = handles[i]
        sizes.append(entries_end(data, offset, size))
        end = offset + sizes[-1]
        digests.append(block_digest(memoryview(data)[offset:end]))
        first = len(keys)
        decode_entries(data, offset, end, keys.append, values.append)
        if (
            len(keys) - first != info.entries
            or sum(map(len, keys[first:])) != info.key_bytes
            or sum(map(len, values[first:])) != info.value_bytes
            or (keys and keys[-1] != last_keys[i])
        ):
            raise CorruptFile(f"tree file {fid}: block {i} does not hold what its table says")
    actual = range_id_v2(digests)
    if actual != fid:
        raise CorruptFile(f"tree file {fid}: content hashes to {actual}")
    base = reader.base_context_checksum
    layout = RangeLayout(data, base, handles, last_keys, infos, sizes, digests)
    return keys, values, layout


def key_hash(key: bytes) -> int:
    return xxhash.xxh64_intdigest(key)
