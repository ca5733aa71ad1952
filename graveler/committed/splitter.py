"""Where range files are cut: the one rule that makes trees history-independent.

After each record is appended to the open range, the range is closed when

* its size (sum of ``len(key) + len(sst_value)`` of its entries) is at least ``max_size``, or
* its size is at least ``min_size`` and ``xxh64(key) % raggedness == 0``.

The decision depends only on the records since the previous cut, so the partition of a sorted
record sequence into ranges is a pure function of that sequence. The tree writer exploits this
to make the same set of records give the same metarange ID whatever commits produced it
(see ``graveler.committed.apply``).

Defaults, chosen with ``python -m benchmarks ranges`` (200k lake-like entries, ~80-byte keys
and ~200-byte values): lakeFS's shipped (0, 20 MiB, 50,000) makes ranges of ~15 MiB, so a
one-key commit rewrites ~50k entries (~340 ms in Python). (128 KiB, 4 MiB, 2048) gives ~620 KiB
ranges of ~2,000 entries: a one-key commit costs ~15-30 ms and a 1M-key tree has ~430 ranges,
while ranges stay above the ~512 KiB below which object-store request latency dominates (see
the seed documents). Smaller raggedness (512) halves commit time again but triples file count.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import compress, count, repeat
from operator import mod, not_

import xxhash

from graveler.model import RangeSettings

DEFAULT_RANGE_SETTINGS = RangeSettings(
    min_size=128 * 1024,
    max_size=4 * 1024 * 1024,
    raggedness=2048,
)


def validate_settings(settings: RangeSettings) -> RangeSettings:
    from graveler.errors import InvalidArgument

    if settings.min_size < 0 or settings.max_size < 1 or settings.raggedness < 1:
        raise InvalidArgument(f"range settings must be positive: {settings}")
    if settings.min_size > settings.max_size:
        raise InvalidArgument(f"range min_size exceeds max_size: {settings}")
    return settings


class Splitter:
    """Stateless cut rule; the caller tracks the open range's size."""

    __slots__ = ("max_size", "min_size", "raggedness")

    def __init__(self, settings: RangeSettings) -> None:
        validate_settings(settings)
        self.min_size = settings.min_size
        self.max_size = settings.max_size
        self.raggedness = settings.raggedness

    def candidates(self, keys: Sequence[bytes]) -> list[int]:
        """Positions whose key passes the hash test (``xxh64(key) % raggedness == 0``): the
        only places besides ``max_size`` where a range may be cut (C-level loops)."""
        hashes = map(xxhash.xxh64_intdigest, keys)
        return list(compress(count(), map(not_, map(mod, hashes, repeat(self.raggedness)))))

    def next_cut(
        self, sums: Sequence[int], start: int, opened: int, candidates: Sequence[int]
    ) -> int | None:
        """The first position ``j >= start`` after which :meth:`should_cut` closes the range,
        for entries whose running sizes are ``sums`` (``sums[j + 1] - sums[start]`` is the
        size of entries ``start..j``), in a range already ``opened`` bytes big; None when the
        range stays open past the last entry."""
        base = opened - sums[start]
        last = len(sums) - 2
        at_max = bisect_left(sums, self.max_size - base, start + 1) - 1
        at_min = bisect_left(sums, self.min_size - base, start + 1) - 1
        cut = at_max if at_max <= last else None
        i = bisect_left(candidates, max(start, at_min))
        if i < len(candidates) and (cut is None or candidates[i] < cut):
            cut = candidates[i]
        return cut

    def should_cut(self, key: bytes, range_size: int) -> bool:
        """True when the range ending with ``key`` (``range_size`` bytes so far) closes."""
        if range_size < self.min_size:
            return False
        if range_size >= self.max_size:
            return True
        return xxhash.xxh64_intdigest(key) % self.raggedness == 0
