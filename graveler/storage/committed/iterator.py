"""The two-level tree iterator.

A :class:`TreeIterator` walks a metarange and stands either on a **range header** (a range not
yet opened: :attr:`header` is set, :attr:`record` is None) or on a **record** inside an opened
range. ``next()`` opens the range under a header or advances one record; ``next_range()`` skips
the rest of the current range *without opening it*. apply, diff and merge are built on this
distinction: ranges whose IDs match are skipped whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from graveler.storage.committed.files import TreeFiles
from graveler.storage.committed.rangedata import RangeData
from graveler.storage.committed.record import RangeInfo, ValueRecord


class TreeIterator:
    __slots__ = ("_data", "_files", "_i", "_pos", "_ranges")

    def __init__(self, files: TreeFiles, ranges: Sequence[RangeInfo]) -> None:
        self._files = files
        self._ranges = ranges
        self._i = 0
        self._data: RangeData | None = None  # set when the current range is opened
        self._pos = 0

    @property
    def valid(self) -> bool:
        return self._i < len(self._ranges)

    @property
    def range(self) -> RangeInfo:
        """The range the iterator is in (header or record); only when valid."""
        return self._ranges[self._i]

    @property
    def header(self) -> RangeInfo | None:
        """The current range when standing on its header, else None."""
        if self._data is None and self._i < len(self._ranges):
            return self._ranges[self._i]
        return None

    @property
    def record(self) -> ValueRecord | None:
        """The current record when inside an opened range, else None."""
        if self._data is None:
            return None
        return self._data.records[self._pos]

    def next(self) -> None:
        """Open the range under a header, or move to the next record / next range header."""
        if self._data is None:
            self._data = self._files.range(self._ranges[self._i].id)
            self._pos = 0
            return
        self._pos += 1
        if self._pos >= len(self._data.records):
            self.next_range()

    @property
    def index(self) -> int:
        """Position of the current range in the metarange."""
        return self._i

    def skip_ranges(self, n: int) -> None:
        """Move ``n`` ranges ahead, onto a header, opening nothing."""
        self._i += n
        self._data = None
        self._pos = 0

    def next_range(self) -> None:
        """Skip to the header of the next range without opening anything."""
        self._i += 1
        self._data = None
        self._pos = 0

    def seek_ge(self, key: bytes) -> None:
        """Stand on the first record with key >= ``key`` (opening its range), or become invalid."""
        i = _range_index(self._ranges, key, self._i)
        self._i = i
        self._data = None
        if i >= len(self._ranges):
            return
        self._data = self._files.range(self._ranges[i].id)
        self._pos = self._data.seek(key)
        if self._pos >= len(self._data.records):
            self.next_range()
            if self.valid:
                self.next()

    def records(self) -> Iterator[ValueRecord]:
        """Every remaining record in order, opening ranges as needed."""
        while self.valid:
            if self._data is None:
                self.next()
                continue
            data, pos = self._data, self._pos
            yield from data.records[pos:]
            self.next_range()

    def cursor(self) -> tuple[RangeData, int]:
        """The opened range and the current position in its records (only on a record)."""
        assert self._data is not None, "cursor() needs the iterator on a record"
        return self._data, self._pos

    def move_to(self, pos: int) -> None:
        """Stand on record ``pos`` of the opened range, or on the next range's header when
        ``pos`` is past its end."""
        assert self._data is not None
        if pos >= len(self._data.records):
            self.next_range()
        else:
            self._pos = pos

    def range_records(self) -> list[ValueRecord]:
        """All records of the current range (opening it if needed); does not move."""
        data = self._data or self._files.range(self._ranges[self._i].id)
        return data.records


def _range_index(ranges: Sequence[RangeInfo], key: bytes, lo: int) -> int:
    """First index >= lo whose max_key >= key (binary search over max keys)."""
    hi = len(ranges)
    while lo < hi:
        mid = (lo + hi) // 2
        if ranges[mid].max_key < key:
            lo = mid + 1
        else:
            hi = mid
    return lo
