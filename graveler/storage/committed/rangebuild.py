"""One v2 range file being assembled from new and copied blocks (see
:mod:`graveler.storage.committed.layout`): the file's bytes, its ID and the decoded range, so that a
range just written is never decoded again."""

from __future__ import annotations

import sys
from typing import NamedTuple

from graveler.storage.committed.layout import (
    BLOCKS_PROPERTY,
    LAYOUT_PROPERTY,
    LAYOUT_V2,
    BlockInfo,
    RangeLayout,
    block_digest,
    encode_block_table,
    range_id_v2,
)
from graveler.storage.committed.rangedata import RangeData
from graveler.storage.committed.record import (
    FINGERPRINT_SIZE,
    RangeInfo,
    ValueRecord,
    record_fingerprints,
)
from graveler.storage.sstable.builder import TableBuilder, encode_block, table_properties


class BuiltRange(NamedTuple):
    """A finished range: its metarange entry, the file's bytes, the decoded range."""

    info: RangeInfo
    data: bytes
    decoded: RangeData


class _New(NamedTuple):
    contents: bytes
    last_key: bytes
    size: int  # encoded bytes of its entries


class _Copied(NamedTuple):
    """Blocks ``first`` to ``end - 1`` of another file."""

    layout: RangeLayout
    first: int
    end: int


class RangeBuilder:
    """Blocks in key order (:meth:`add_block`, :meth:`copy_block`), then :meth:`finish`."""

    def __init__(self) -> None:
        self._blocks: list[_New | _Copied] = []
        self._infos: list[BlockInfo] = []
        self._digests: list[bytes] = []  # every block's, for the ID
        self._keys: list[bytes] = []
        self._records: list[ValueRecord] = []
        self._fingerprints: list[bytes] = []
        self.size = 0  # encoded bytes of the entries: the range rule's measure

    def add_block(
        self, keys: list[bytes], values: list[bytes], records: list[ValueRecord], sizes: list[int]
    ) -> None:
        """A new block of these entries (``sizes``: their encoded sizes, from
        :func:`~graveler.storage.sstable.builder.entry_sizes`)."""
        contents = encode_block(keys, values, sizes)
        self._blocks.append(_New(contents.data, keys[-1], contents.entries_end))
        self._digests.append(block_digest(memoryview(contents.data)[: contents.entries_end]))
        info = BlockInfo(len(keys), sum(map(len, keys)), sum(map(len, values)))
        self._infos.append(info)
        self.size += contents.entries_end
        self._keys += keys
        self._records += records
        self._fingerprints.append(record_fingerprints(keys, values))

    def copy_blocks(self, layout: RangeLayout, first: int, end: int, source: RangeData) -> None:
        """Blocks ``first`` to ``end - 1`` of the file ``source`` (whose layout is
        ``layout``), copied: their records are taken from ``source``."""
        self._blocks.append(_Copied(layout, first, end))
        self._digests += layout.digests[first:end]
        self._infos += layout.infos[first:end]
        self.size += sum(layout.sizes[first:end])
        a, z = layout.starts[first], layout.starts[end]
        self._keys += source.keys[a:z]
        self._records += source.records[a:z]
        fp = FINGERPRINT_SIZE
        self._fingerprints.append(source.fingerprints[a * fp : z * fp])

    def finish(self) -> BuiltRange:
        """The file, named by its entries; at least one block must have been added."""
        rid = sys.intern(range_id_v2(self._digests))
        builder = TableBuilder(int(rid[:8], 16) or 1)
        last_keys: list[bytes] = []
        sizes: list[int] = []
        for block in self._blocks:
            if isinstance(block, _New):
                builder.add(block.contents, block.last_key)
                last_keys.append(block.last_key)
                sizes.append(block.size)
                continue
            layout, first, end = block
            keys = layout.last_keys[first:end]
            builder.copy(layout.data, layout.handles[first:end], layout.base, keys)
            last_keys += keys
            sizes += layout.sizes[first:end]
        entries = sum(info.entries for info in self._infos)
        props = table_properties(
            entries,
            sum(info.key_bytes for info in self._infos),
            sum(info.value_bytes for info in self._infos),
        )
        props[LAYOUT_PROPERTY.encode()] = LAYOUT_V2
        props[BLOCKS_PROPERTY.encode()] = encode_block_table(self._infos)
        data = builder.finish(props)
        handles = builder.handles()
        layout = RangeLayout(
            data, builder.base, handles, last_keys, self._infos, sizes, self._digests
        )
        info = RangeInfo(rid, self._keys[0], self._keys[-1], entries, self.size)
        fingerprints = b"".join(self._fingerprints)
        decoded = RangeData(rid, self._keys, self._records, fingerprints, self.size, layout)
        return BuiltRange(info, data, decoded)
