"""A decoded range file: its records, their fingerprints and, for layout v2, its blocks."""

from __future__ import annotations

from bisect import bisect_left

from graveler.storage.committed.layout import RangeLayout
from graveler.storage.committed.record import ValueRecord, record_fingerprints

#: A range's key index is built once it has been looked up more than one time in this many
#: of its records (until then, binary search: building the index costs about as much as
#: this many searches).
_RECORDS_PER_INDEXED_PROBE = 8


class RangeData:
    """A decoded range: records in key order, the records' fingerprints
    (:func:`record_fingerprints`) for comparing ranges without touching records, a key index
    for point lookups (built on first use) and, for a file of layout v2, its block layout."""

    __slots__ = ("_index", "_probes", "fingerprints", "id", "keys", "layout", "nbytes", "records")

    def __init__(
        self,
        range_id: str,
        keys: list[bytes],
        records: list[ValueRecord],
        fingerprints: bytes,
        nbytes: int,
        layout: RangeLayout | None = None,
    ) -> None:
        self.id = range_id
        self.keys = keys
        self.records = records
        self.fingerprints = fingerprints
        self.nbytes = nbytes
        self.layout = layout
        self._index: dict[bytes, ValueRecord] | None = None
        self._probes = 0

    @classmethod
    def of(
        cls,
        range_id: str,
        keys: list[bytes],
        values: list[bytes],
        records: list[ValueRecord],
        nbytes: int,
        layout: RangeLayout | None = None,
    ) -> RangeData:
        """The range of these records (``values``: their SST values)."""
        return cls(range_id, keys, records, record_fingerprints(keys, values), nbytes, layout)

    @property
    def index(self) -> dict[bytes, ValueRecord]:
        """Key -> record."""
        index = self._index
        if index is None:
            index = self._index = dict(zip(self.keys, self.records, strict=True))
        return index

    def get(self, key: bytes) -> ValueRecord | None:
        """The record at ``key``, or None: by binary search until the range has been looked
        up often for its size, then through :attr:`index` (a range looked up a few times
        should not pay for a dict of all its records)."""
        index = self._index
        if index is not None:
            return index.get(key)
        self._probes += 1
        if self._probes * _RECORDS_PER_INDEXED_PROBE > len(self.keys):
            return self.index.get(key)
        i = bisect_left(self.keys, key)
        return self.records[i] if i < len(self.keys) and self.keys[i] == key else None

    def seek(self, key: bytes) -> int:
        """Position of the first record with key >= ``key``."""
        return bisect_left(self.keys, key)
