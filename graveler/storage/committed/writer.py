"""The tree writer: turns a key-ordered stream of records, copied blocks and reused ranges
into a metarange.

Records are cut into blocks and ranges by :class:`Splitter`. A reused range (an existing file
taken whole) may only be appended at a range boundary (:attr:`TreeWriter.at_boundary`), a
copied block (a block of an existing v2 range file, taken as bytes) only at a block boundary
(:attr:`TreeWriter.at_block_boundary`) and only if it ends where the block rule ends a block
(:meth:`TreeWriter.copyable`). Because both cut rules depend only on the entries since the
last cut, appending whole blocks and ranges at their boundaries yields exactly the partition a
from-scratch write of the same records would produce: trees are history-independent.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from operator import itemgetter, lt
from typing import TYPE_CHECKING

from graveler.core.errors import InvalidArgument
from graveler.core.model import RangeSettings
from graveler.storage.committed.files import TreeFiles
from graveler.storage.committed.layout import RangeLayout
from graveler.storage.committed.rangebuild import RangeBuilder
from graveler.storage.committed.rangedata import RangeData
from graveler.storage.committed.record import RangeInfo, ValueRecord, encode_values
from graveler.storage.committed.splitter import Splitter, key_hashes
from graveler.storage.sstable.builder import entry_sizes

if TYPE_CHECKING:
    from concurrent.futures import Future


#: Range files of a tree flushed as soon as they are stored (the rest with the metarange).
EARLY_FLUSHED_RANGES = 4


class TreeWriter:
    def __init__(self, files: TreeFiles, settings: RangeSettings) -> None:
        self._files = files
        self._splitter = Splitter(settings)
        self._ranges: list[RangeInfo] = []
        self._range: RangeBuilder | None = None  # the open range's closed blocks
        # the open block
        self._keys: list[bytes] = []
        self._values: list[bytes] = []
        self._records: list[ValueRecord] = []
        self._sizes: list[int] = []
        self._block_size = 0
        self._last_key: bytes | None = None
        self.ranges_written = 0
        self.ranges_reused = 0
        self.blocks_copied = 0
        self._stored: list[Future[str]] = []  # range files being stored in the background

    @property
    def at_boundary(self) -> bool:
        """True when no range is open (the next range starts fresh)."""
        return self._range is None and not self._keys

    @property
    def at_block_boundary(self) -> bool:
        """True when no block is open (the next block starts fresh)."""
        return not self._keys

    def add(self, record: ValueRecord) -> None:
        """Append a record; keys must strictly increase across the whole tree."""
        self.add_run([record])

    def add_run(self, records: list[ValueRecord]) -> None:
        """Append many records at once (keys strictly increasing, after every key written),
        cutting blocks and ranges exactly where record-by-record appends would: the
        per-record work runs in C-level loops, and the cut points are found by binary search
        over running sizes."""
        if not records:
            return
        keys = list(map(itemgetter(0), records))
        if (self._last_key is not None and keys[0] <= self._last_key) or not all(
            map(lt, keys, islice(keys, 1, None))
        ):
            raise InvalidArgument("tree keys must strictly increase across the whole tree")
        values = encode_values(records)
        sizes = entry_sizes(keys, values)
        hashes = key_hashes(keys)
        start = 0
        for end in self._splitter.block_ends(sizes, hashes, self._block_size):
            self._take(keys, values, records, sizes, start, end + 1)
            self._close_block(hashes[end])
            start = end + 1
        self._take(keys, values, records, sizes, start, len(keys))
        self._last_key = keys[-1]

    def _take(
        self,
        keys: list[bytes],
        values: list[bytes],
        records: list[ValueRecord],
        sizes: list[int],
        start: int,
        end: int,
    ) -> None:
        if start < end:
            self._keys += keys[start:end]
            self._values += values[start:end]
            self._records += records[start:end]
            self._sizes += sizes[start:end]
            self._block_size += sum(sizes[start:end])

    def copyable(self, layout: RangeLayout, first: int, end: int) -> int:
        """How many of blocks ``first`` to ``end - 1`` of ``layout``, from ``first`` on, end
        where the block rule ends a block, so can be copied (every block of a v2 file does,
        but the last of a tree, which may end with the data)."""
        sizes, hashes, closes = layout.sizes, layout.hashes, self._splitter.block_closes
        for i in range(first, end):
            if not closes(sizes[i], hashes[i]):
                return i - first
        return end - first

    def copy_blocks(self, layout: RangeLayout, first: int, end: int, source: RangeData) -> None:
        """Append blocks ``first`` to ``end - 1`` of an existing v2 range file as bytes
        (``source``: that file decoded, ``layout`` its layout), closing ranges where the range
        rule says. Only at a block boundary, after every key written, and for blocks that
        :meth:`copyable` allows."""
        if end <= first:
            return
        if not self.at_block_boundary or self.copyable(layout, first, end) != end - first:
            raise InvalidArgument("blocks can only be copied at a block boundary, whole")
        if self._last_key is not None and source.keys[layout.starts[first]] <= self._last_key:
            raise InvalidArgument("copied block overlaps keys already written")
        sizes, hashes, closes = layout.sizes, layout.hashes, self._splitter.range_closes
        run = first
        size = self._range.size if self._range is not None else 0
        for i in range(first, end):
            size += sizes[i]
            if closes(size, hashes[i]):
                self._copy_run(layout, run, i + 1, source)
                self._close_range()
                run, size = i + 1, 0
        self._copy_run(layout, run, end, source)
        self._last_key = layout.last_keys[end - 1]

    def _copy_run(self, layout: RangeLayout, first: int, end: int, source: RangeData) -> None:
        if first < end:
            rng = self._range = self._range or RangeBuilder()
            rng.copy_blocks(layout, first, end, source)
            self.blocks_copied += end - first

    def reuse(self, info: RangeInfo) -> None:
        """Append an existing range whole (no I/O). Only allowed at a boundary."""
        if not self.at_boundary:
            raise InvalidArgument("a range can only be reused at a range boundary")
        if self._last_key is not None and info.min_key <= self._last_key:
            raise InvalidArgument("reused range overlaps keys already written")
        self._ranges.append(info)
        self._last_key = info.max_key
        self.ranges_reused += 1

    def finish(self, pending: Sequence[Future[str]] = ()) -> str:
        """Close the open block and range and write the metarange; returns its ID once every
        file of the tree, and the objects ``pending`` gives the keys of, are durable."""
        if self._keys:
            self._close_block(None)
        if self._range is not None:
            self._close_range()
        return self._files.write_metarange(self._ranges, [*self._stored, *pending])

    def _close_block(self, last_hash: int | None) -> None:
        """Close the open block (``last_hash``: its last key's hash; None at the end of the
        data, where the range closes anyway)."""
        rng = self._range = self._range or RangeBuilder()
        rng.add_block(self._keys, self._values, self._records, self._sizes)
        self._keys, self._values, self._records, self._sizes = [], [], [], []
        self._block_size = 0
        if last_hash is not None and self._splitter.range_closes(rng.size, last_hash):
            self._close_range()

    def _close_range(self) -> None:
        assert self._range is not None
        built = self._range.finish()
        self._range = None
        flush = self.ranges_written < EARLY_FLUSHED_RANGES
        self._stored.append(self._files.store_range(built, flush=flush))
        self._ranges.append(built.info)
        self.ranges_written += 1
