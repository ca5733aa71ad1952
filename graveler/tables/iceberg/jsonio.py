"""Iceberg metadata JSON in and out: orjson when installed (the ``tables`` extra has it),
else the json module. A table's metadata file holds every snapshot of its history, and
merges and commits parse and write it whole, so this is where a long history costs.

:func:`loads_metadata` is the merge's way in: the arrays that grow with the history
(``snapshots`` and ``snapshot-log``) stay JSON text, as :class:`LazyArray`, and only the
elements a merge reads are decoded (a merge reads the snapshots since the merge base, not the
thousands before). msgspec finds the elements' bounds, checking that the text is JSON,
without building a Python object for each; :func:`dumps` writes a lazy array back as its
own text with what was added spliced in. Building and freeing the objects of a 10,000
snapshot history cost a merge about 50 ms; finding the bounds costs about 3.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Sequence
from operator import attrgetter, is_not
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from graveler.tables.iceberg.jsontail import TailScanner
try:
    import orjson
except ImportError:  # pragma: no cover - the tables extra installs it
    orjson = None  # type: ignore[assignment]
try:
    import msgspec
except ImportError:  # pragma: no cover - the tables extra installs it
    msgspec = None  # type: ignore[assignment]

#: Top-level keys of a table's metadata that grow with its history.
HISTORY_ARRAYS = ("snapshots", "snapshot-log")


def loads(data: bytes | str) -> Any:
    """The document ``data`` holds (ValueError when it is not JSON)."""
    if orjson is not None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise ValueError(str(exc)) from None
    return json.loads(data)


def dumps(doc: Any) -> bytes:
    """Compact JSON of ``doc`` (a :class:`LazyArray` in it is written as its text)."""
    if orjson is not None:
        return orjson.dumps(doc, default=_fragment)
    return json.dumps(doc, separators=(",", ":")).encode()  # no LazyArray without orjson


def dumps_chunks(doc: dict[str, Any]) -> list[bytes | memoryview]:
    """:func:`dumps` of ``doc`` as pieces whose concatenation is its JSON: the text of each
    :class:`LazyArray` in its top level is a piece of its own, not copied (what the merged
    metadata file is written from)."""
    lazy = {key: value for key, value in doc.items() if isinstance(value, LazyArray)}
    if orjson is None or not lazy:
        return [dumps(doc)]
    token = f"graveler-lazy-array-{uuid.uuid4().hex}"
    marks = {key: f"{token}-{i}" for i, key in enumerate(lazy)}
    text = dumps({key: marks.get(key, value) for key, value in doc.items()})
    pieces: list[bytes | memoryview] = []
    for key, mark in marks.items():
        quoted = orjson.dumps(mark)
        head, found, text = text.partition(quoted)
        if not found or quoted in text:
            return [dumps(doc)]
        pieces.append(head)
        pieces += lazy[key].json_pieces()
    pieces.append(text)
    return pieces


def loads_metadata(data: bytes) -> Any:
    """A table metadata document whose :data:`HISTORY_ARRAYS` are :class:`LazyArray`
    (plain lists where msgspec or orjson is missing); ValueError when ``data`` is not JSON."""
    if msgspec is None or orjson is None:
        return loads(data)
    try:
        top = _TOP.decode(data)
    except msgspec.DecodeError:  # not an object, or not JSON: say which as loads does
        return loads(data)
    out: dict[str, Any] = {}
    for key, raw in top.items():
        text = memoryview(raw)
        if key in HISTORY_ARRAYS and text[:1].tobytes() == b"[":
            out[key] = LazyArray(text)
        else:
            out[key] = orjson.loads(text)
    return out


def extended(array: Sequence[Any] | None, items: Iterable[Any]) -> Sequence[Any]:
    """A new sequence: ``array`` (None: empty) followed by ``items``; a LazyArray stays
    lazy (:meth:`LazyArray.plus`)."""
    if isinstance(array, LazyArray):
        return array.plus(items)
    return [*(array or ()), *items]


class _Stored:
    """The text of a :class:`LazyArray` and what was read from it, shared by the arrays
    :meth:`LazyArray.plus` makes. The elements' bounds are found when first needed: an
    array that is only extended (a merge's ``snapshot-log``) is never split, and the last
    elements are found from the end (:class:`~graveler.tables.iceberg.jsontail.TailScanner`)
    without the others."""

    __slots__ = ("_bounds", "_tail", "decoded", "from_end", "keys", "positions", "text", "wide")

    def __init__(self, text: bytes | memoryview) -> None:
        self.text = text
        self._bounds: list[Any] | None = None
        self._tail: TailScanner | None = None
        self.decoded: dict[int, Any] = {}  # by index
        self.from_end: dict[int, Any] = {}  # by index from the end (0: the last), read by tail
        self.keys: dict[str, tuple[Any, ...]] = {}
        self.positions: dict[str, dict[Any, int]] = {}
        self.wide = False  # a lookup went past TAIL_LOOKUPS: look up by positions from now on

    @property
    def bounds(self) -> list[Any]:
        if self._bounds is None:
            self._bounds = _ARRAY.decode(self.text)
        return self._bounds

    def known_count(self) -> int | None:
        """How many elements the text holds, if a read made so far tells."""
        if self._bounds is not None:
            return len(self._bounds)
        if self.keys:
            return len(next(iter(self.keys.values())))
        if self._tail is not None and self._tail.complete:
            return len(self._tail.spans)
        return None

    def count(self) -> int:
        """How many elements the text holds (from any one-pass read already made)."""
        known = self.known_count()
        return len(self.bounds) if known is None else known

    def element(self, index: int) -> Any:
        """Element ``index`` (0 <= index < count), decoded once."""
        found = self.decoded.get(index)
        if found is None:
            found = self.from_end.get(self.count() - 1 - index)
            if found is None:
                found = orjson.loads(memoryview(self.bounds[index]))
            self.decoded[index] = found
        return found

    def last(self, k: int) -> Any:
        """The ``k``-th element from the end (0: the last), read from the end:
        :data:`_UNREACHABLE` when the tail scan cannot tell, :data:`_NONE` past the start."""
        found = self.from_end.get(k)
        if found is not None:
            return found
        count = self.known_count()
        if self._bounds is not None and count is not None:
            return _NONE if k >= count else self.element(count - 1 - k)
        if self._tail is None:  # only lazy arrays get here: msgspec is installed
            from graveler.tables.iceberg.jsontail import TailScanner

            self._tail = TailScanner(self.text)
        if self._tail.span(k) is None:
            return _NONE if self._tail.complete else _UNREACHABLE
        found = self.from_end[k] = orjson.loads(self._tail.element(k))
        return found

    def empty(self) -> bool:
        return _EMPTY.match(self.text) is not None


class LazyArray(Sequence[Any]):
    """A JSON array kept as its text (exactly the array: ``[`` to ``]``, a view of the
    document it came from); an element is decoded when first read, then kept.

    Elements read from the text are never written back: treat them as read-only. Adding
    makes a new array (:meth:`plus`) that shares the text and the decoded elements; its
    JSON (:meth:`to_json`) is the text with the added elements spliced in before the
    closing bracket."""

    def __init__(self, text: bytes | memoryview, *, _shared: _Stored | None = None) -> None:
        self._stored = _Stored(text) if _shared is None else _shared
        self._added: list[Any] = []

    def __len__(self) -> int:
        return self._stored.count() + len(self._added)

    def __bool__(self) -> bool:  # without counting the elements
        return bool(self._added) or not self._stored.empty()

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("LazyArray index out of range")
        stored = self._stored
        if index >= stored.count():
            return self._added[index - stored.count()]
        return stored.element(index)

    def find_last(self, key: str, value: Any) -> Any:
        """The last element whose ``key`` is ``value`` (not None), or :data:`MISSING`: looked
        for from the end (the newest elements, what merges read), by positions past
        :data:`TAIL_LOOKUPS` elements or where the tail scan cannot tell."""
        for item in reversed(self._added):
            if _get(item, key) == value:
                return item
        stored = self._stored
        if not stored.wide and key not in stored.positions:
            for k in range(TAIL_LOOKUPS):
                item = stored.last(k)
                if item is _NONE:
                    return MISSING
                if item is _UNREACHABLE:
                    break
                if _get(item, key) == value:
                    return item
            stored.wide = True
        at = stored.positions.get(key)
        if at is None:
            at = LazyArray(b"", _shared=stored).positions(key)
        index = at.get(value)
        return MISSING if index is None else stored.element(index)

    def added_since(self, earlier: LazyArray) -> list[Any] | None:
        """The elements this array has after all of ``earlier``'s, when it was made from
        ``earlier`` by adding (:meth:`plus`); else None."""
        if self._stored is not earlier._stored:
            return None
        count = len(earlier._added)
        if len(self._added) < count or any(map(is_not, self._added, earlier._added)):
            return None
        return self._added[count:]

    def plus(self, items: Iterable[Any]) -> LazyArray:
        """A new array: this one followed by ``items``."""
        out = LazyArray(b"", _shared=self._stored)
        out._added = [*self._added, *items]
        return out

    def values_of(self, key: str) -> Sequence[Any]:
        """Each element's ``key`` (None where an element is not an object or lacks it), in
        order: read from the text in one pass (once per array), without decoding the
        elements."""
        stored = self._stored
        found = stored.keys.get(key)
        if found is None:
            try:
                found = tuple(map(_VALUE, _keyed_decoder(key).decode(stored.text)))
            except msgspec.DecodeError:  # an element that is not an object
                found = tuple(_get(self[i], key) for i in range(len(stored.bounds)))
            stored.keys[key] = found
        return found + tuple(_get(x, key) for x in self._added) if self._added else found

    def positions(self, key: str) -> dict[Any, int]:
        """Each value of ``key`` (:meth:`values_of`) -> the index of the last element that
        has it, as a dict built in order would have it (read-only: it may be shared)."""
        stored = self._stored.positions.get(key)
        first = self._stored.count()
        if stored is None:
            stored = self._stored.positions[key] = {
                value: i for i, value in enumerate(self.values_of(key)[:first])
            }
        if not self._added:
            return stored
        return {**stored, **{_get(x, key): first + i for i, x in enumerate(self._added)}}

    def to_json(self) -> bytes:
        """The array's compact JSON."""
        return b"".join(self.json_pieces())

    def json_pieces(self) -> list[bytes | memoryview]:
        """Pieces whose concatenation is :meth:`to_json` (the stored text is not copied)."""
        text = memoryview(self._stored.text)
        if not self._added:
            return [text]
        added = b",".join(orjson.dumps(x, default=_fragment) for x in self._added)
        head = text[:-1]  # the text is exactly the array: it ends with "]"
        return [head, b"" if self._stored.empty() else b",", added, b"]"]


#: Elements looked at from the end by :meth:`LazyArray.find_last` before it reads positions.
TAIL_LOOKUPS = 64
#: What :meth:`LazyArray.find_last` answers when no element matches.
MISSING: Any = object()
_NONE: Any = object()  # past the array's start
_UNREACHABLE: Any = object()  # the tail scan cannot tell


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else None


def _fragment(value: Any) -> Any:
    if isinstance(value, LazyArray):
        return orjson.Fragment(value.to_json())
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


_KEYED: dict[str, Any] = {}
_VALUE = attrgetter("value")


def _keyed_decoder(key: str) -> Any:
    """A decoder of an array of objects into just ``key`` of each, as ``.value`` (msgspec
    skips the other members without building them)."""
    decoder = _KEYED.get(key)
    if decoder is None:
        row = msgspec.defstruct("Row", [("value", Any, None)], rename={"value": key})
        decoder = _KEYED[key] = msgspec.json.Decoder(list[row])  # type: ignore[valid-type]
    return decoder


if msgspec is not None:
    _TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
    _ARRAY = msgspec.json.Decoder(list[msgspec.Raw])
#: An array's text with no element.
_EMPTY = re.compile(rb"\[\s*\]")
