"""apply: build a new tree from a base tree and a key-ordered stream of changes.

For every base range, in order:

* if the writer is at a range boundary and no change falls inside or before the range, the
  range is reused whole (no I/O);
* otherwise, for a range of layout v2, block by block: a block no change falls in is copied
  as bytes when the writer is at a block boundary, and the records of the others are merged
  with their changes and streamed through the writer, which re-cuts them with the splitter;
  a range of layout v1 is streamed through the writer record by record.

A range is only reused at a range boundary, a block only at a block boundary and only where
the block rule ends a block, so the resulting partition equals the one a from-scratch write
of the final records would give (the writer "resynchronises" with the base at the first cut
that coincides with a base block or range end). Cost: the changes, the blocks they fall in and
a copy of the rest of the ranges they touch, not the size of the tree.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from graveler.core.errors import InvalidArgument
from graveler.core.model import RangeSettings
from graveler.storage.committed.files import TreeFiles
from graveler.storage.committed.layout import RangeLayout
from graveler.storage.committed.rangedata import RangeData
from graveler.storage.committed.record import RangeInfo, ValueRecord
from graveler.storage.committed.writer import TreeWriter

if TYPE_CHECKING:
    from concurrent.futures import Future


class Change(NamedTuple):
    """A staged change: a new record for ``key``, or a tombstone (``record is None``)."""

    key: bytes
    record: ValueRecord | None


@dataclass
class ApplySummary:
    added: int = 0
    removed: int = 0
    changed: int = 0
    ranges_written: int = 0
    ranges_reused: int = 0
    blocks_copied: int = 0

    @property
    def changes(self) -> int:
        return self.added + self.removed + self.changed


class _Changes:
    """A peekable, order-checked stream of changes."""

    __slots__ = ("_it", "_last", "head")

    def __init__(self, changes: Iterable[Change]) -> None:
        self._it: Iterator[Change] = iter(changes)
        self._last: bytes | None = None
        self.head: Change | None = None
        self.advance()

    def advance(self) -> None:
        nxt = next(self._it, None)
        if nxt is not None:
            if self._last is not None and nxt.key <= self._last:
                raise InvalidArgument(
                    f"changes must be sorted by key without duplicates: {nxt.key!r}"
                )
            self._last = nxt.key
        self.head = nxt


def apply_changes(
    files: TreeFiles,
    settings: RangeSettings,
    base_ranges: Sequence[RangeInfo],
    changes: Iterable[Change],
    pending: Sequence[Future[str]] = (),
) -> tuple[str, ApplySummary]:
    """Apply ``changes`` over the tree whose ranges are ``base_ranges``; returns the new
    metarange ID and what changed, once the tree is durable with the objects ``pending``
    gives the keys of (see :meth:`TreeFiles.write_metarange`)."""
    writer = TreeWriter(files, settings)
    summary = ApplySummary()
    stream = _Changes(changes)
    last = len(base_ranges) - 1
    for i, rng in enumerate(base_ranges):
        head = stream.head
        untouched = head is None or (head.key > rng.max_key and i < last)
        if untouched and writer.at_boundary:
            writer.reuse(rng)
            continue
        limit = rng.max_key if i < last else None
        data = files.range(rng.id)
        if data.layout is None:  # layout v1: every record goes through the writer
            _merge_range(writer, data.records, data.keys, stream, limit, summary)
        else:
            _merge_blocks(writer, data, data.layout, stream, limit, summary)
    _merge_range(writer, [], [], stream, None, summary)
    metarange_id = writer.finish(pending)
    summary.ranges_written = writer.ranges_written
    summary.ranges_reused = writer.ranges_reused
    summary.blocks_copied = writer.blocks_copied
    return metarange_id, summary


def _merge_blocks(
    writer: TreeWriter,
    data: RangeData,
    layout: RangeLayout,
    stream: _Changes,
    limit: bytes | None,
    summary: ApplySummary,
) -> None:
    """:func:`_merge_range` for a range of layout v2, a block at a time: a block that no
    change falls in is copied as bytes when the writer is at a block boundary; the others
    are merged with their changes record by record."""
    final = len(layout) - 1
    b = 0
    while b <= final:
        head = stream.head
        untouched = final + 1 if head is None else bisect_left(layout.last_keys, head.key, b)
        if untouched > b and writer.at_block_boundary:
            run = writer.copyable(layout, b, untouched)
            writer.copy_blocks(layout, b, b + run, data)
            b += run
            if run:
                continue
        first, end = layout.starts[b], layout.starts[b + 1]
        bound = limit if b == final else layout.last_keys[b]
        _merge_range(writer, data.records[first:end], data.keys[first:end], stream, bound, summary)
        b += 1


#: Records handed to the writer at a time while merging (bounds memory on huge imports).
RUN_LENGTH = 16_384


def _merge_range(
    writer: TreeWriter,
    records: Sequence[ValueRecord],
    keys: Sequence[bytes],
    stream: _Changes,
    limit: bytes | None,
    summary: ApplySummary,
) -> None:
    """Write ``records`` (whose keys are ``keys``) merged with the changes whose key <=
    ``limit`` (all when None). Unchanged stretches are copied as slices; the merged records
    go to the writer in runs."""
    out: list[ValueRecord] = []
    pos = 0
    while (head := stream.head) is not None and (limit is None or head.key <= limit):
        at = bisect_left(keys, head.key, pos)
        out += records[pos:at]
        pos = at
        if at < len(keys) and keys[at] == head.key:
            pos = at + 1
            old, new = records[at], head.record
            if new is None:
                summary.removed += 1
            elif new.identity == old.identity:
                out.append(old)  # same object: keep the committed record so the range can match
            else:
                out.append(new)
                summary.changed += 1
        elif head.record is not None:
            out.append(head.record)
            summary.added += 1
        stream.advance()
        if len(out) >= RUN_LENGTH:
            writer.add_run(out)
            out = []
    out += records[pos:]
    writer.add_run(out)
