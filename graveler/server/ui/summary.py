"""Counting a comparison: added, removed and changed objects in total and per prefix.

A diff of two commits can hold millions of changes, and counting them means reading all of
them. So counting goes in slices: each slice reads the diff on from where the last one
stopped (a seek, see ``Repository.diff(after=...)``) for at most ``SLICE_SECONDS``, and the
page polls for the next slice until the count is complete. Two commits never change, so a
count (finished or not) is kept per (repository, left commit, right commit, prefix) in a
small LRU and shared by every viewer; a finished one is never recomputed.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from graveler.views.diff import Difference

#: How long one request may count before answering with what it has.
SLICE_SECONDS = 0.75
#: Prefixes counted separately; changes under further prefixes are counted as "other".
MAX_GROUPS = 500
#: Comparisons whose counts are kept.
CACHE_ENTRIES = 64


@dataclass
class Counts:
    added: int = 0
    removed: int = 0
    changed: int = 0

    @property
    def total(self) -> int:
        return self.added + self.removed + self.changed

    def add(self, kind: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)


def group_of(path: str, prefix: str) -> str:
    """The group of ``path`` below ``prefix``: the next prefix (``prefix + "dir/"``), or
    ``""`` for an object directly under ``prefix``."""
    rest = path[len(prefix) :]
    cut = rest.find("/")
    return "" if cut < 0 else prefix + rest[: cut + 1]


@dataclass
class Summary:
    """Counts of one comparison under ``prefix``; ``complete`` once the diff was read to
    its end, ``resume`` being the last path counted until then."""

    prefix: str
    totals: Counts = field(default_factory=Counts)
    groups: dict[str, Counts] = field(default_factory=dict)
    other: Counts = field(default_factory=Counts)
    complete: bool = False
    resume: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, diffs: Iterable[Difference], seconds: float | None = None) -> None:
        """Count ``diffs`` (which must start past ``resume``) for at most ``seconds`` (all
        of them when None); ``complete`` is set when they run out."""
        deadline = None if seconds is None else time.monotonic() + seconds
        for n, d in enumerate(diffs):
            self._add(d)
            if deadline is not None and n % 256 == 255 and time.monotonic() > deadline:
                return
        self.complete = True

    def _add(self, d: Difference) -> None:
        kind = d.type.value
        self.totals.add(kind)
        key = group_of(d.path, self.prefix)
        counts = self.groups.get(key)
        if counts is None and len(self.groups) < MAX_GROUPS:
            counts = self.groups[key] = Counts()
        (counts or self.other).add(kind)
        self.resume = d.path


class SummaryCache:
    """The counts of recent comparisons of commits (immutable inputs), least recently used
    dropped first."""

    def __init__(self, entries: int = CACHE_ENTRIES) -> None:
        self._entries = entries
        self._items: OrderedDict[tuple[str, ...], Summary] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...], prefix: str) -> Summary:
        """The summary for ``key``, a fresh one when unknown."""
        with self._lock:
            found = self._items.get(key)
            if found is None:
                found = self._items[key] = Summary(prefix)
                while len(self._items) > self._entries:
                    self._items.popitem(last=False)
            self._items.move_to_end(key)
            return found
