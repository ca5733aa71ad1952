"""CommittedManager: the committed-data half of graveler for one storage namespace.

A thin facade over :class:`TreeFiles` and the tree algorithms. Trees are named by metarange
ID (``""`` is the empty tree). Everything here is immutable: writing returns new IDs.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from graveler.core.keyspace import successor
from graveler.core.model import EMPTY_METARANGE_ID, RangeSettings
from graveler.storage.committed.cache import TieredCache
from graveler.storage.committed.files import MetarangeData, TreeFiles
from graveler.storage.committed.iterator import TreeIterator
from graveler.storage.committed.record import RangeInfo, ValueRecord
from graveler.storage.committed.splitter import DEFAULT_RANGE_SETTINGS, validate_settings
from graveler.storage.objectstore.port import ObjectStore

if TYPE_CHECKING:  # the algorithms are imported by the methods that run them
    from graveler.storage.committed.apply import ApplySummary, Change
    from graveler.storage.committed.diff import DiffEntry
    from graveler.storage.committed.merge import MergeStrategy, PrefixOverride, RecordResolver

#: A batch holding more than 1/WHOLE_INDEX_RATIO of a tree's records probes a whole-tree dict.
WHOLE_INDEX_RATIO = 20
#: RAM cost of one whole-tree index slot (dict entry + index), for the cache budget.
WHOLE_INDEX_BYTES_PER_RECORD = 48


class CommittedManager:
    def __init__(
        self,
        store: ObjectStore,
        cache: TieredCache,
        settings: RangeSettings = DEFAULT_RANGE_SETTINGS,
    ) -> None:
        self.settings = validate_settings(settings)
        self.files = TreeFiles(store, cache)

    # --- reading -------------------------------------------------------------------------------

    def ranges(self, metarange_id: str) -> list[RangeInfo]:
        return self.files.metarange(metarange_id).ranges

    def get(self, metarange_id: str, key: bytes) -> ValueRecord | None:
        """The record at ``key``, or None. Two in-memory lookups on a warm cache."""
        meta = self.files.metarange(metarange_id)
        ranges = meta.ranges
        i = bisect_left(meta.max_keys, key)
        if i >= len(ranges):
            return None
        rng = ranges[i]
        if key < rng.min_key:
            return None
        return self.files.range(rng.id).get(key)

    def get_many(self, metarange_id: str, keys: Sequence[bytes]) -> list[ValueRecord | None]:
        """Records for ``keys`` (None where absent), aligned with the input.

        Large batches (more than 1/``WHOLE_INDEX_RATIO`` of the tree's records) probe a single
        dict over the whole tree, built once per metarange with C-level merges (~50 ns a
        record) and kept in the RAM tier; probing one dict instead of hundreds of per-range
        dicts saves about 1 us per key once the tree no longer fits in CPU caches. Smaller
        batches are grouped by range so each range's index is probed while it is hot."""
        meta = self.files.metarange(metarange_id)
        if meta.num_records and len(keys) * WHOLE_INDEX_RATIO >= meta.num_records:
            return list(map(self._whole_index(meta).get, keys))
        ranges = meta.ranges
        positions = list(map(partial(bisect_left, meta.max_keys), keys))
        groups: defaultdict[int, list[int]] = defaultdict(list)
        for j, pos in enumerate(positions):
            groups[pos].append(j)
        out: list[ValueRecord | None] = [None] * len(keys)
        key_at = keys.__getitem__
        for pos in sorted(groups):  # ranges in key order: their data was built in that order
            if pos >= len(ranges):
                continue
            members = groups[pos]
            get = self.files.range(ranges[pos].id).get
            for j, rec in zip(members, map(get, map(key_at, members)), strict=True):
                out[j] = rec
        return out

    def _whole_index(self, meta: MetarangeData) -> dict[bytes, ValueRecord]:
        """One dict over every record of the tree (cached in the RAM tier)."""
        cache_id = meta.id + "#index"

        def build() -> dict[bytes, ValueRecord]:
            index: dict[bytes, ValueRecord] = {}
            for rng in meta.ranges:
                index.update(self.files.range(rng.id).index)
            return index

        return self.files.cache.derived(
            cache_id, build, lambda d: WHOLE_INDEX_BYTES_PER_RECORD * len(d)
        )

    def iterate(
        self, metarange_id: str, start: bytes = b"", prefix: bytes = b""
    ) -> Iterator[ValueRecord]:
        """Records with key >= max(start, prefix) that start with ``prefix``, in key order."""
        it = TreeIterator(self.files, self.ranges(metarange_id))
        it.seek_ge(max(start, prefix))
        for rec in it.records():
            if not rec.key.startswith(prefix):
                return
            yield rec

    # --- writing -------------------------------------------------------------------------------

    def write_records(self, records: Iterable[ValueRecord]) -> tuple[str, ApplySummary]:
        """Build a tree from key-ordered records (import / bulk load)."""
        from graveler.storage.committed.apply import Change

        return self.apply(EMPTY_METARANGE_ID, (Change(r.key, r) for r in records))

    def apply(self, base_id: str, changes: Iterable[Change]) -> tuple[str, ApplySummary]:
        """New tree = ``base_id`` with key-ordered ``changes`` applied."""
        from graveler.storage.committed.apply import apply_changes

        return apply_changes(self.files, self.settings, self.ranges(base_id), changes)

    def diff(
        self, left_id: str, right_id: str, prefix: bytes = b"", start: bytes = b""
    ) -> Iterator[DiffEntry]:
        """Differences turning ``left_id`` into ``right_id`` under ``prefix`` with keys >=
        ``start``, in key order.

        With a prefix or a start key, both trees are cut to the ranges that can hold such keys
        (a binary search in each metarange), so the cost follows the ranges under the prefix
        and past the start (one page of a long diff costs one page), not the size of the
        trees."""
        from graveler.storage.committed.diff import diff_trees

        if left_id == right_id:
            return iter(())
        left, right = self.files.metarange(left_id), self.files.metarange(right_id)
        if not prefix and not start:
            return diff_trees(self.files, left.ranges, right.ranges, left.ids, right.ids)
        (lo, hi), (ro, rhi) = _span(left, prefix, start), _span(right, prefix, start)
        found = diff_trees(
            self.files, left.ranges[lo:hi], right.ranges[ro:rhi], left.ids[lo:hi], right.ids[ro:rhi]
        )
        return _under(found, prefix, start)

    def merge(
        self,
        base_id: str,
        source_id: str,
        dest_id: str,
        strategy: MergeStrategy | str | None = None,
        resolver: RecordResolver | None = None,
        override: PrefixOverride | None = None,
    ) -> tuple[str, ApplySummary]:
        """Three-way merge; raises MergeConflict. Trivial cases never touch ranges.
        ``resolver`` decides conflicting keys before ``strategy``; ``override`` replaces the
        merge under some prefixes (see merge_trees)."""
        from graveler.storage.committed.apply import ApplySummary
        from graveler.storage.committed.merge import MergeStrategy, merge_trees

        strat = MergeStrategy.parse(strategy)
        if override is None or not override.prefixes:
            if source_id in (base_id, dest_id):
                return dest_id, ApplySummary()
            if dest_id == base_id:
                return source_id, _summary_of(self.diff(dest_id, source_id))
        return merge_trees(
            self.files,
            self.settings,
            self.ranges(base_id),
            self.ranges(source_id),
            self.ranges(dest_id),
            strat,
            resolver,
            override,
        )


def _summary_of(entries: Iterable[DiffEntry]) -> ApplySummary:
    from graveler.storage.committed.apply import ApplySummary

    summary = ApplySummary()
    for e in entries:
        if e.left is None:
            summary.added += 1
        elif e.right is None:
            summary.removed += 1
        else:
            summary.changed += 1
    return summary


__all__ = ["ApplySummary", "Change", "CommittedManager", "MergeStrategy", "ValueRecord"]


def __getattr__(name: str) -> Any:
    """The re-exported names of the algorithms' modules, imported on first use."""
    homes = {
        "ApplySummary": "apply",
        "Change": "apply",
        "MergeStrategy": "merge",
    }
    if name in homes:
        import importlib

        return getattr(importlib.import_module(f"graveler.storage.committed.{homes[name]}"), name)
    raise AttributeError(f"module 'graveler.storage.committed.manager' has no attribute {name!r}")


def _span(meta: MetarangeData, prefix: bytes, start: bytes = b"") -> tuple[int, int]:
    """The slice of ``meta``'s ranges that may hold keys starting with ``prefix`` and not
    below ``start``."""
    first = meta.range_for(max(prefix, start))
    upper = successor(prefix)
    last = len(meta.ranges) if upper is None else min(meta.range_for(upper) + 1, len(meta.ranges))
    return first, max(first, last)


def _under(entries: Iterator[DiffEntry], prefix: bytes, start: bytes = b"") -> Iterator[DiffEntry]:
    """The entries whose keys start with ``prefix`` and are >= ``start`` (the boundary ranges
    of a cut tree also hold keys outside those bounds); stops at the first key past the
    prefix."""
    for entry in entries:
        if entry.key.startswith(prefix):
            if entry.key >= start:
                yield entry
        elif entry.key > prefix:
            return
