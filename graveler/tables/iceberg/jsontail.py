"""Finding the last elements of a long JSON array without reading the rest of it.

A merge reads a table's newest snapshots, which are the last elements of its metadata's
``snapshots`` array, thousands of elements long. :class:`TailScanner` finds element bounds
from the array's end, one element at a time, and is exact, not a guess:

* the text is the whole array and already known to be valid JSON (the caller decoded the
  document around it);
* an element found so far begins at a ``{`` outside any string, so the separator before it
  (whitespace, then ``,`` or the array's ``[``) is outside strings too, and the element
  before ends at that ``,``;
* the element before is an object: its start is the ``{``, outside any string, whose object
  ends exactly at that end. Candidates are tried from the right. A ``{`` is outside strings
  when the element's text from it to the end holds no backslash and an even number of
  quotes; the one whose text decodes as exactly one JSON value is the element's start (a
  ``{`` nested deeper closes before the end, so its text would not be a single value).

Anything else (an element that is not an object, a backslash in an element, an element with
very many nested objects) stops the scan: :meth:`TailScanner.span` then answers None and the
caller reads the array whole.

Only a window at the end of the text is copied out of it (growing fourfold when an element
reaches past its start): a copy of a whole history costs more, in fresh memory, than the
scan.
"""

from __future__ import annotations

import msgspec

_WHITESPACE = b" \t\n\r"
#: Nested ``{`` tried in one element before the scan gives up.
MAX_CANDIDATES = 64
#: Bytes of the array first copied from its end.
WINDOW = 64 * 1024
_ONE = msgspec.json.Decoder(msgspec.Raw)


class TailScanner:
    """Element bounds of a JSON array, found from its end (see the module docstring)."""

    __slots__ = ("_failed", "_next_end", "_offset", "_text", "_view", "complete", "spans")

    def __init__(self, view: bytes | memoryview) -> None:
        """``view`` is exactly one valid JSON array: ``[`` to ``]``."""
        self._view = memoryview(view)
        self._offset = max(0, len(self._view) - WINDOW)  # where the window starts
        self._text = bytes(self._view[self._offset :])
        self.spans: list[tuple[int, int]] = []  # (start, end) of elements, last first
        self.complete = False  # every element found: len(spans) is the array's length
        self._failed = False
        self._next_end = self._skip_back(len(self._view) - 2)  # the last element's last byte

    def span(self, k: int) -> tuple[int, int] | None:
        """Bounds of the ``k``-th element from the end (0: the last), or None when the scan
        cannot reach it (see the module docstring) or the array is shorter."""
        while len(self.spans) <= k and not self.complete and not self._failed:
            self._step()
        return self.spans[k] if k < len(self.spans) else None

    def element(self, k: int) -> bytes:
        """The text of the ``k``-th element from the end, once :meth:`span` has found it."""
        start, end = self.spans[k]
        return self._text[start - self._offset : end - self._offset]

    def _step(self) -> None:
        last = self._next_end
        if last <= 0:  # only the opening bracket before: no element left
            self.complete = True
            return
        start = self._start_of(last + 1) if self._at(last) == 0x7D else None  # "}"
        if start is None:
            self._failed = True
            return
        self.spans.append((start, last + 1))
        before = self._skip_back(start - 1)
        if before == 0 and self._at(0) == 0x5B:  # "["
            self.complete = True
        elif before > 0 and self._at(before) == 0x2C:  # ","
            self._next_end = self._skip_back(before - 1)
        else:
            self._failed = True

    def _start_of(self, end: int) -> int | None:
        """Where the object ending at ``end`` (exclusive) begins."""
        at = end
        for _ in range(MAX_CANDIDATES):
            at = self._rfind_brace(at)
            if at <= 0:
                return None
            text, low, high = self._text, at - self._offset, end - self._offset
            if text.count(b"\\", low, high):
                return None
            if text.count(b'"', low, high) % 2:
                continue  # inside a string
            try:
                _ONE.decode(text[low:high])
            except msgspec.DecodeError:
                continue  # a nested object: it closes before the end
            return at
        return None

    def _rfind_brace(self, before: int) -> int:
        """The position of the last ``{`` before ``before`` (-1 if none), growing the window
        until it holds one or the whole text."""
        while True:
            found = self._text.rfind(b"{", 0, before - self._offset)
            if found >= 0 or self._offset == 0:
                return found + self._offset if found >= 0 else -1
            self._grow()

    def _grow(self) -> None:
        size = 4 * (len(self._view) - self._offset)
        self._offset = max(0, len(self._view) - size)
        self._text = bytes(self._view[self._offset :])

    def _at(self, i: int) -> int:
        while i < self._offset:
            self._grow()
        return self._text[i - self._offset]

    def _skip_back(self, at: int) -> int:
        """The position of the last non-whitespace byte at or before ``at``."""
        while at > 0 and self._at(at) in _WHITESPACE:
            at -= 1
        return at
