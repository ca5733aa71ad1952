"""diff: the record-level differences between two trees, skipping ranges they share.

Both trees are walked with :class:`TreeIterator`. Two range headers with the same ID are
skipped without opening either; a range lying wholly before the other side's position is
reported whole (all removed, or all added); anything else is opened and compared record by
record. Records are equal when key and identity are equal. Output is in key order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import StrEnum
from itertools import compress, count
from operator import ne
from typing import NamedTuple

from graveler.committed.files import TreeFiles
from graveler.committed.iterator import TreeIterator
from graveler.committed.record import RangeInfo, ValueRecord


class DiffType(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


class DiffEntry(NamedTuple):
    type: DiffType
    key: bytes
    left: ValueRecord | None
    right: ValueRecord | None


def diff_trees(
    files: TreeFiles, left: Sequence[RangeInfo], right: Sequence[RangeInfo]
) -> Iterator[DiffEntry]:
    """Differences turning ``left`` into ``right``."""
    lit, rit = TreeIterator(files, left), TreeIterator(files, right)
    left_ids, right_ids = [r.id for r in left], [r.id for r in right]
    while lit.valid and rit.valid:
        lh, rh = lit.header, rit.header
        if lh is not None and rh is not None:
            if lh.id == rh.id:
                _skip_shared(lit, rit, left_ids, right_ids)
                continue
            yield from _both_headers(lit, rit, lh, rh)
        elif lh is not None:
            yield from _header_vs_record(lit, rit, lh, DiffType.REMOVED)
        elif rh is not None:
            yield from _header_vs_record(rit, lit, rh, DiffType.ADDED)
        else:
            yield from _both_records(lit, rit)
    yield from _rest(lit, DiffType.REMOVED)
    yield from _rest(rit, DiffType.ADDED)


def _skip_shared(
    lit: TreeIterator, rit: TreeIterator, left_ids: list[str], right_ids: list[str]
) -> None:
    """Both on headers of the same range: skip the whole run of shared ranges at once,
    comparing the two ID lists in C rather than stepping header by header."""
    i, j = lit.index, rit.index
    run = next(compress(count(), map(ne, left_ids[i:], right_ids[j:])), None)
    if run is None:
        run = min(len(left_ids) - i, len(right_ids) - j)
    lit.skip_ranges(run)
    rit.skip_ranges(run)


def _both_headers(
    lit: TreeIterator, rit: TreeIterator, lh: RangeInfo, rh: RangeInfo
) -> Iterator[DiffEntry]:
    if lh.id == rh.id:
        lit.next_range()
        rit.next_range()
    elif lh.max_key < rh.min_key:
        yield from _whole(lit, DiffType.REMOVED)
    elif rh.max_key < lh.min_key:
        yield from _whole(rit, DiffType.ADDED)
    else:
        lit.next()
        rit.next()


def _header_vs_record(
    hit: TreeIterator, recit: TreeIterator, header: RangeInfo, header_side: DiffType
) -> Iterator[DiffEntry]:
    """One side on a header, the other on a record."""
    rec = recit.record
    assert rec is not None
    if header.max_key < rec.key:
        yield from _whole(hit, header_side)
    elif header.min_key > rec.key:
        yield _single(rec, _other(header_side))
        recit.next()
    else:
        hit.next()


def _both_records(lit: TreeIterator, rit: TreeIterator) -> Iterator[DiffEntry]:
    """Both sides inside opened ranges: merge-compare the two record lists in one tight loop
    until either range ends (then the header logic can skip shared ranges again)."""
    left, i = lit.cursor()
    right, j = rit.cursor()
    nl, nr = len(left), len(right)
    out: list[DiffEntry] = []
    if i == j == 0 and nl == nr:
        i = j = _aligned_prefix(left, right, out)
    while i < nl and j < nr:
        a, b = left[i], right[j]
        ka, kb = a[0], b[0]
        if ka == kb:
            if a[1] != b[1]:
                out.append(DiffEntry(DiffType.CHANGED, ka, a, b))
            i += 1
            j += 1
        elif ka < kb:
            out.append(DiffEntry(DiffType.REMOVED, ka, a, None))
            i += 1
        else:
            out.append(DiffEntry(DiffType.ADDED, kb, None, b))
            j += 1
    lit.move_to(i)
    rit.move_to(j)
    yield from out


def _aligned_prefix(left: list[ValueRecord], right: list[ValueRecord], out: list[DiffEntry]) -> int:
    """Compare two equally long ranges position by position in C (``map(ne)``), reporting
    changed records, until the first position whose keys differ; returns that position (the
    length when keys never diverge). Overwritten objects are the common case this speeds up."""
    for k in compress(count(), map(ne, left, right)):
        a, b = left[k], right[k]
        if a[0] != b[0]:
            return k
        if a[1] != b[1]:
            out.append(DiffEntry(DiffType.CHANGED, a[0], a, b))
    return len(left)


def _whole(it: TreeIterator, side: DiffType) -> Iterator[DiffEntry]:
    """Report every record of the range under the header and move past it."""
    for r in it.range_records():
        yield _single(r, side)
    it.next_range()


def _rest(it: TreeIterator, side: DiffType) -> Iterator[DiffEntry]:
    for rec in it.records():
        yield _single(rec, side)


def _single(rec: ValueRecord, side: DiffType) -> DiffEntry:
    if side is DiffType.ADDED:
        return DiffEntry(DiffType.ADDED, rec.key, None, rec)
    return DiffEntry(DiffType.REMOVED, rec.key, rec, None)


def _other(side: DiffType) -> DiffType:
    return DiffType.ADDED if side is DiffType.REMOVED else DiffType.REMOVED
