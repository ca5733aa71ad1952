"""Where data blocks and range files are cut: the rules that make trees history-independent
and let a rewrite copy what did not change (graveler tree layout v2).

Every entry's key has a hash, ``h = xxh64(key)``. With ``B`` the encoded bytes of the open
block, including the entry just appended:

* a **block** closes after an entry when ``h % raggedness == 0``, or ``B >= BLOCK_MIN`` and
  ``h % BLOCK_MODULUS == 0``, or ``B >= BLOCK_MAX``;
* a **range** closes only where a block closes, with ``R`` the encoded bytes of its blocks:
  when ``R >= max_size``, or ``R >= min_size`` and the block's last key has
  ``h % raggedness == 0``.

A block's end depends only on the entries since the block began, and a range's end only on
the blocks since the range began, so the partition of a sorted record sequence into blocks
and ranges is a pure function of that sequence. Two consequences carry the tree writer:

* a range that no change touches is reused whole when the writer is at a range boundary;
* inside a range that changes, a block that no change touches is copied as bytes when the
  writer is at a block boundary: a rewrite costs the blocks the changes fall in (about 45
  lake-like entries each) plus a copy of the rest, not a re-encoding of the range.

Every key that can end a range ends a block (``h % raggedness == 0`` closes one whatever its
size), so a copied block can end a range but never hides a range's end inside it.

Range defaults, chosen with ``python -m benchmarks ranges`` (200k lake-like entries, ~80-byte
keys and ~200-byte values): lakeFS's shipped (0, 20 MiB, 50,000) makes ranges of ~15 MiB.
(128 KiB, 4 MiB, 2048) gives ranges of ~600 KiB, ~2,000 entries: a 1M-key tree has ~430
ranges, and ranges stay above the ~512 KiB below which object-store request latency
dominates (see the seed documents).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate, compress, count, repeat
from operator import mod, not_

import xxhash

from graveler.core.model import RangeSettings

DEFAULT_RANGE_SETTINGS = RangeSettings(
    min_size=128 * 1024,
    max_size=4 * 1024 * 1024,
    raggedness=2048,
)

#: Encoded bytes from which a block may close at a key whose hash passes BLOCK_MODULUS.
BLOCK_MIN = 4 * 1024
#: One key in this many may close a block of at least BLOCK_MIN bytes.
BLOCK_MODULUS = 32
#: A block closes at the first entry that takes it to this many bytes.
BLOCK_MAX = 64 * 1024


def validate_settings(settings: RangeSettings) -> RangeSettings:
    from graveler.core.errors import InvalidArgument

    if settings.min_size < 0 or settings.max_size < 1 or settings.raggedness < 1:
        raise InvalidArgument(f"range settings must be positive: {settings}")
    if settings.min_size > settings.max_size:
        raise InvalidArgument(f"range min_size exceeds max_size: {settings}")
    return settings


def key_hashes(keys: Sequence[bytes]) -> list[int]:
    """``xxh64`` of each key (the hash both rules test)."""
    return list(map(xxhash.xxh64_intdigest, keys))


class Splitter:
    """The two cut rules for one repository's settings; callers track the open block's and
    range's sizes."""

    __slots__ = ("max_size", "min_size", "raggedness")

    def __init__(self, settings: RangeSettings) -> None:
        validate_settings(settings)
        self.min_size = settings.min_size
        self.max_size = settings.max_size
        self.raggedness = settings.raggedness

    def block_ends(self, sizes: Sequence[int], hashes: Sequence[int], opened: int) -> list[int]:
        """Positions ``j`` after which a block closes, for entries of encoded ``sizes`` and
        key ``hashes`` appended to a block already ``opened`` bytes big (C-level loops and a
        binary search per block)."""
        sums = list(accumulate(sizes, initial=0))
        always = _positions(hashes, self.raggedness)
        gated = _positions(hashes, BLOCK_MODULUS)
        ends: list[int] = []
        start, base = 0, opened
        while start < len(sizes):
            end = self._next_end(sums, start, base, always, gated)
            if end is None:
                break
            ends.append(end)
            start, base = end + 1, 0
        return ends

    def _next_end(
        self,
        sums: list[int],
        start: int,
        base: int,
        always: list[int],
        gated: list[int],
    ) -> int | None:
        offset = base - sums[start]  # block bytes after entry j: sums[j + 1] + offset
        last = len(sums) - 2
        end = bisect_left(sums, BLOCK_MAX - offset, start + 1) - 1
        found = end if end <= last else None
        i = bisect_left(always, start)
        if i < len(always) and (found is None or always[i] < found):
            found = always[i]
        at_min = bisect_left(sums, BLOCK_MIN - offset, start + 1) - 1
        i = bisect_left(gated, max(start, at_min))
        if i < len(gated) and (found is None or gated[i] < found):
            found = gated[i]
        return found

    def block_closes(self, size: int, key_hash: int) -> bool:
        """True when a block of ``size`` bytes closes after a key with hash ``key_hash``."""
        if key_hash % self.raggedness == 0 or size >= BLOCK_MAX:
            return True
        return size >= BLOCK_MIN and key_hash % BLOCK_MODULUS == 0

    def range_closes(self, size: int, last_hash: int) -> bool:
        """True when a range of ``size`` bytes closes after a block whose last key has hash
        ``last_hash``."""
        if size >= self.max_size:
            return True
        return size >= self.min_size and last_hash % self.raggedness == 0


def _positions(hashes: Sequence[int], modulus: int) -> list[int]:
    """Positions whose hash is a multiple of ``modulus``."""
    return list(compress(count(), map(not_, map(mod, hashes, repeat(modulus)))))
