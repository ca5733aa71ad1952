"""diff: the record-level differences between two trees, skipping ranges they share.

Both trees are walked with :class:`TreeIterator`. Two range headers with the same ID are
skipped without opening either; a range lying wholly before the other side's position is
reported whole (all removed, or all added); anything else is opened. Two opened ranges that
cover the same key interval are compared through their record fingerprints, which skips runs
of equal records with ``memcmp`` (a third level below metarange and range); other overlaps are
merge-compared record by record. Records are equal when key and identity are equal. Output is
in key order.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from enum import StrEnum
from itertools import compress, count
from operator import ne
from typing import NamedTuple

from graveler.storage.committed.files import TreeFiles
from graveler.storage.committed.iterator import TreeIterator
from graveler.storage.committed.rangedata import RangeData
from graveler.storage.committed.record import FINGERPRINT_SIZE, RangeInfo, ValueRecord


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
    files: TreeFiles,
    left: Sequence[RangeInfo],
    right: Sequence[RangeInfo],
    left_ids: list[str] | None = None,
    right_ids: list[str] | None = None,
) -> Iterator[DiffEntry]:
    """Differences turning ``left`` into ``right``. ``left_ids`` / ``right_ids`` are the
    ranges' IDs in order when the caller has them (a cached metarange keeps them)."""
    lit, rit = TreeIterator(files, left), TreeIterator(files, right)
    lids = left_ids if left_ids is not None else [r.id for r in left]
    rids = right_ids if right_ids is not None else [r.id for r in right]
    while lit.valid and rit.valid:
        lh, rh = lit.header, rit.header
        if lh is not None and rh is not None:
            if lh.id == rh.id:
                run = _shared_run(lids, rids, lit.index, rit.index)
                lit.skip_ranges(run)
                rit.skip_ranges(run)
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


def _shared_run(a: list[str], b: list[str], i: int, j: int) -> int:
    """Length of the run of equal range IDs starting at ``a[i] == b[j]``.

    Gallops over list slices compared in C (range IDs are interned, so equal IDs are usually
    the same object and compare by pointer), then finds the first mismatch inside the last
    window: the work is proportional to the run, not to the rest of the metarange."""
    limit = min(len(a) - i, len(b) - j)
    known, step = 1, 8
    while known < limit:
        end = min(limit, known + step)
        if a[i + known : i + end] == b[j + known : j + end]:
            known, step = end, step * 2
            continue
        window = map(ne, a[i + known : i + end], b[j + known : j + end])
        return known + next(compress(count(), window))
    return limit


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
    """Both sides inside opened ranges. Two ranges opened at their first record that end at
    the same key are compared whole through their fingerprints; otherwise the record lists are
    merge-compared until either range ends (then the header logic can skip shared ranges)."""
    ldata, i = lit.cursor()
    rdata, j = rit.cursor()
    out: list[DiffEntry] = []
    if i == j == 0 and lit.range.max_key == rit.range.max_key:
        _diff_spans(ldata, rdata, 0, len(ldata.records), 0, len(rdata.records), out)
        lit.next_range()
        rit.next_range()
    else:
        i, j = _merge_compare(
            ldata.records, rdata.records, i, len(ldata.records), j, len(rdata.records), out
        )
        lit.move_to(i)
        rit.move_to(j)
    yield from out


def _diff_spans(
    left: RangeData, right: RangeData, l0: int, l1: int, r0: int, r1: int, out: list[DiffEntry]
) -> None:
    """Report the differences between ``left.records[l0:l1]`` and ``right.records[r0:r1]``,
    two spans holding the same key interval.

    Equal leading and trailing records are trimmed by comparing fingerprint strings (binary
    search over ``memcmp``); a long remainder is split at a key into two independent halves,
    so a range with a few changes costs O(changes x log(range)) string compares instead of a
    pass over every record."""
    n = _common_prefix(left.fingerprints, right.fingerprints, l0, r0, min(l1 - l0, r1 - r0))
    l0, r0 = l0 + n, r0 + n
    n = _common_suffix(left.fingerprints, right.fingerprints, l1, r1, min(l1 - l0, r1 - r0))
    l1, r1 = l1 - n, r1 - n
    if l1 - l0 <= _SMALL_SPAN or r1 - r0 <= _SMALL_SPAN:
        i, j = _merge_compare(left.records, right.records, l0, l1, r0, r1, out)
        out.extend(_single(rec, DiffType.REMOVED) for rec in left.records[i:l1])
        out.extend(_single(rec, DiffType.ADDED) for rec in right.records[j:r1])
        return
    mid = (l0 + l1) // 2
    rmid = bisect_left(right.keys, left.keys[mid], r0, r1)
    _diff_spans(left, right, l0, mid, r0, rmid, out)
    _diff_spans(left, right, mid, l1, rmid, r1, out)


#: Spans at most this long are merge-compared record by record.
_SMALL_SPAN = 16
_FP = FINGERPRINT_SIZE


def _common_prefix(a: bytes, b: bytes, i: int, j: int, limit: int) -> int:
    """Largest n <= limit with fingerprints a[i:i+n] == b[j:j+n] (in records).

    Binary search that only ever compares the half not yet known equal, so the bytes compared
    add up to about one pass over the span rather than one pass per step."""
    ai, bj = i * _FP, j * _FP
    if a[ai : ai + limit * _FP] == b[bj : bj + limit * _FP]:
        return limit
    lo, hi = 0, limit  # the first lo records match; the first hi do not all match
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[ai + lo * _FP : ai + mid * _FP] == b[bj + lo * _FP : bj + mid * _FP]:
            lo = mid
        else:
            hi = mid
    return lo


def _common_suffix(a: bytes, b: bytes, i_end: int, j_end: int, limit: int) -> int:
    """Largest n <= limit with fingerprints a[i_end-n:i_end] == b[j_end-n:j_end]."""
    ae, be = i_end * _FP, j_end * _FP
    if a[ae - limit * _FP : ae] == b[be - limit * _FP : be]:
        return limit
    lo, hi = 0, limit  # the last lo records match; the last hi do not all match
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[ae - mid * _FP : ae - lo * _FP] == b[be - mid * _FP : be - lo * _FP]:
            lo = mid
        else:
            hi = mid
    return lo


def _merge_compare(
    left: list[ValueRecord],
    right: list[ValueRecord],
    i: int,
    nl: int,
    j: int,
    nr: int,
    out: list[DiffEntry],
) -> tuple[int, int]:
    """Merge-compare ``left[i:nl]`` with ``right[j:nr]`` until either side ends; returns the
    positions reached."""
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
    return i, j


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
