"""Three-way merge of trees: base, source, destination.

The merge is computed as the changes source made relative to base, resolved against the
destination, and applied over the destination with :func:`apply_changes`:

============  ==============  ====================  ==========================================
base          source          destination           result
============  ==============  ====================  ==========================================
A             A               anything              destination (source did not touch it)
A             B (or deleted)  A                     source's side
A             B               B                     B (same change on both sides)
A             B               C, or deleted         conflict
A             deleted         deleted               deleted
missing       B               missing               B
missing       B               C                     conflict (added differently)
============  ==============  ====================  ==========================================

Conflicts go first to the resolver, when one is given (it returns "source", "dest" or None for
each key; see :mod:`graveler.versioning.conflicts`), then to the strategy: ``dest-wins`` keeps the
destination, ``source-wins`` takes the source, no strategy raises :class:`MergeConflict`
listing every conflicting key. Only source's
diff from base and the destination ranges it touches are read, so the cost follows the change.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from graveler.core.errors import InvalidArgument, MergeConflict
from graveler.core.model import RangeSettings
from graveler.storage.committed.apply import ApplySummary, Change, apply_changes
from graveler.storage.committed.diff import DiffEntry, diff_trees
from graveler.storage.committed.files import TreeFiles
from graveler.storage.committed.iterator import TreeIterator
from graveler.storage.committed.record import RangeInfo, ValueRecord

if TYPE_CHECKING:
    from concurrent.futures import Future

#: Per-key conflict resolution: (key, base, source, dest) -> "source", "dest" or None.
RecordResolver = Callable[
    [bytes, ValueRecord | None, ValueRecord | None, ValueRecord | None], str | None
]


class MergeStrategy(StrEnum):
    NONE = "none"
    DEST_WINS = "dest-wins"
    SOURCE_WINS = "source-wins"

    @classmethod
    def parse(cls, value: str | MergeStrategy | None) -> MergeStrategy:
        if value is None or value == "":
            return cls.NONE
        try:
            return cls(value)
        except ValueError:
            raise InvalidArgument(
                f"unknown merge strategy {value!r}; use 'dest-wins' or 'source-wins'"
            ) from None


@dataclass(frozen=True)
class PrefixOverride:
    """Key prefixes whose merged contents were decided above the tree (a table merged as a
    table, see :mod:`graveler.tables`): the source's changes under them are ignored and
    ``changes`` (key-ordered, every key under one of the prefixes) are applied over the
    destination instead. ``flushing``: objects written for those changes, being made durable
    (each future gives the object's key): the merged tree is durable only with them."""

    prefixes: tuple[bytes, ...]
    changes: tuple[Change, ...]
    flushing: tuple[Future[str], ...] = ()

    def covers(self, key: bytes) -> bool:
        return any(key.startswith(p) for p in self.prefixes)


def merge_trees(
    files: TreeFiles,
    settings: RangeSettings,
    base: Sequence[RangeInfo],
    source: Sequence[RangeInfo],
    dest: Sequence[RangeInfo],
    strategy: MergeStrategy = MergeStrategy.NONE,
    resolver: RecordResolver | None = None,
    override: PrefixOverride | None = None,
) -> tuple[str, ApplySummary]:
    """The merged tree's metarange ID and what it changed in the destination."""
    conflicts: list[bytes] = []
    diff = diff_trees(files, base, source)
    if override is not None and override.prefixes:
        diff = (e for e in diff if not override.covers(e.key))
    changes = _resolve(files, diff, dest, strategy, conflicts, resolver)
    if override is not None and override.changes:
        changes = heapq.merge(changes, override.changes, key=lambda c: c.key)
    flushing = override.flushing if override is not None else ()
    metarange_id, summary = apply_changes(files, settings, dest, changes, flushing)
    if conflicts:
        raise MergeConflict(conflicts)
    return metarange_id, summary


def _resolve(
    files: TreeFiles,
    source_diff: Iterator[DiffEntry],
    dest: Sequence[RangeInfo],
    strategy: MergeStrategy,
    conflicts: list[bytes],
    resolver: RecordResolver | None = None,
) -> Iterator[Change]:
    """Changes to apply over the destination, collecting conflicting keys on the way."""
    lookup = _ForwardLookup(files, dest)
    for entry in source_diff:
        base_rec, src_rec = entry.left, entry.right
        dst_rec = lookup.get(entry.key)
        if _same(dst_rec, base_rec):
            yield Change(entry.key, src_rec)
        elif _same(dst_rec, src_rec):
            continue
        else:
            choice = resolver(entry.key, base_rec, src_rec, dst_rec) if resolver else None
            if choice == "source" or (choice is None and strategy is MergeStrategy.SOURCE_WINS):
                yield Change(entry.key, src_rec)
            elif choice is None and strategy is MergeStrategy.NONE:
                conflicts.append(entry.key)


def _same(a: ValueRecord | None, b: ValueRecord | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.identity == b.identity


class _ForwardLookup:
    """Point lookups for increasing keys, reusing the opened range between calls."""

    def __init__(self, files: TreeFiles, ranges: Sequence[RangeInfo]) -> None:
        self._it = TreeIterator(files, ranges)
        self._files = files
        self._ranges = ranges

    def get(self, key: bytes) -> ValueRecord | None:
        it = self._it
        if not it.valid:
            return None
        rng = it.range
        if key > rng.max_key or it.record is None:
            it.seek_ge(key)
            if not it.valid:
                return None
            rng = it.range
        if key < rng.min_key:
            return None
        return self._files.range(rng.id).get(key)
