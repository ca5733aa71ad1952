"""The tree writer: turns a key-ordered stream of records and reused ranges into a metarange.

Records are cut into ranges by :class:`Splitter`. A reused range (an existing file taken whole)
may only be appended at a *boundary* (no open range) -- the caller checks
:attr:`TreeWriter.at_boundary`. Because the cut rule depends only on the records since the last
cut, appending whole base ranges at boundaries yields exactly the partition a from-scratch
write of the same records would produce: trees are history-independent.
"""

from __future__ import annotations

from itertools import accumulate, islice
from operator import add, itemgetter, lt
from typing import TYPE_CHECKING

from graveler.committed.files import TreeFiles
from graveler.committed.record import RangeInfo, ValueRecord, encode_value, encode_values
from graveler.committed.splitter import Splitter
from graveler.errors import InvalidArgument
from graveler.model import RangeSettings

if TYPE_CHECKING:
    from concurrent.futures import Future


class TreeWriter:
    def __init__(self, files: TreeFiles, settings: RangeSettings) -> None:
        self._files = files
        self._splitter = Splitter(settings)
        self._ranges: list[RangeInfo] = []
        self._keys: list[bytes] = []
        self._values: list[bytes] = []
        self._records: list[ValueRecord] = []
        self._size = 0
        self._last_key: bytes | None = None
        self.ranges_written = 0
        self.ranges_reused = 0
        self._stored: list[Future[str]] = []  # range files being stored in the background

    @property
    def at_boundary(self) -> bool:
        """True when no range is open (the next range starts fresh)."""
        return not self._keys

    def add(self, record: ValueRecord) -> None:
        """Append a record; keys must strictly increase across the whole tree."""
        key = record.key
        if self._last_key is not None and key <= self._last_key:
            raise InvalidArgument(
                f"tree keys must strictly increase: {key!r} after {self._last_key!r}"
            )
        self._last_key = key
        value = encode_value(record.identity, record.value)
        self._keys.append(key)
        self._values.append(value)
        self._records.append(record)
        self._size += len(key) + len(value)
        if self._splitter.should_cut(key, self._size):
            self._close_range()

    def add_run(self, records: list[ValueRecord]) -> None:
        """Append many records at once (keys strictly increasing, after every key written),
        cutting ranges exactly where :meth:`add` would: the per-record work runs in C-level
        loops, and the cut points are found by binary search over running sizes."""
        if not records:
            return
        keys = list(map(itemgetter(0), records))
        if (self._last_key is not None and keys[0] <= self._last_key) or not all(
            map(lt, keys, islice(keys, 1, None))
        ):
            raise InvalidArgument("tree keys must strictly increase across the whole tree")
        values = encode_values(records)
        sums = list(accumulate(map(add, map(len, keys), map(len, values)), initial=0))
        candidates = self._splitter.candidates(keys)
        start = 0
        while start < len(keys):
            cut = self._splitter.next_cut(sums, start, self._size, candidates)
            end = len(keys) if cut is None else cut + 1
            self._keys += keys[start:end]
            self._values += values[start:end]
            self._records += records[start:end]
            self._size += sums[end] - sums[start]
            if cut is not None:
                self._close_range()
            start = end
        self._last_key = keys[-1]

    def reuse(self, info: RangeInfo) -> None:
        """Append an existing range whole (no I/O). Only allowed at a boundary."""
        if not self.at_boundary:
            raise InvalidArgument("a range can only be reused at a range boundary")
        if self._last_key is not None and info.min_key <= self._last_key:
            raise InvalidArgument("reused range overlaps keys already written")
        self._ranges.append(info)
        self._last_key = info.max_key
        self.ranges_reused += 1

    def finish(self) -> str:
        """Close the open range and write the metarange; returns its ID once every file of
        the tree is stored."""
        if self._keys:
            self._close_range()
        return self._files.write_metarange(self._ranges, self._stored)

    def _close_range(self) -> None:
        info, stored = self._files.write_range(self._keys, self._values, self._records, self._size)
        self._stored.append(stored)
        self._ranges.append(info)
        self.ranges_written += 1
        self._keys, self._values, self._records, self._size = [], [], [], 0
