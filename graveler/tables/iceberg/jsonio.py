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
from collections.abc import Iterable, Sequence
from typing import Any, overload

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


class LazyArray(Sequence[Any]):
    """A JSON array kept as its text (exactly the array: ``[`` to ``]``, a view of the
    document it came from); an element is decoded when first read, then kept.

    Elements read from the text are never written back: treat them as read-only. Adding
    makes a new array (:meth:`plus`) that shares the text and the decoded elements; its
    JSON (:meth:`to_json`) is the text with the added elements spliced in before the
    closing bracket."""

    def __init__(self, text: bytes | memoryview, *, _shared: LazyArray | None = None) -> None:
        if _shared is None:
            self._text = text
            self._bounds: list[Any] = _ARRAY.decode(text)
            self._decoded: dict[int, Any] = {}
            self._keys: dict[str, tuple[Any, ...]] = {}
            self._positions: dict[str, dict[Any, int]] = {}
        else:
            self._text, self._bounds = _shared._text, _shared._bounds
            self._decoded, self._keys = _shared._decoded, _shared._keys
            self._positions = _shared._positions
        self._added: list[Any] = []

    def __len__(self) -> int:
        return len(self._bounds) + len(self._added)

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
        stored = len(self._bounds)
        if index >= stored:
            return self._added[index - stored]
        if index not in self._decoded:
            self._decoded[index] = orjson.loads(memoryview(self._bounds[index]))
        return self._decoded[index]

    def plus(self, items: Iterable[Any]) -> LazyArray:
        """A new array: this one followed by ``items``."""
        out = LazyArray(b"", _shared=self)
        out._added = [*self._added, *items]
        return out

    def values_of(self, key: str) -> Sequence[Any]:
        """Each element's ``key`` (None where an element is not an object or lacks it), in
        order: read from the text in one pass (once per array), without decoding the
        elements."""
        found = self._keys.get(key)
        if found is None:
            try:
                found = tuple(row.value for row in _keyed_decoder(key).decode(self._text))
            except msgspec.DecodeError:  # an element that is not an object
                found = tuple(_get(self[i], key) for i in range(len(self._bounds)))
            self._keys[key] = found
        return found + tuple(_get(x, key) for x in self._added) if self._added else found

    def positions(self, key: str) -> dict[Any, int]:
        """Each value of ``key`` (:meth:`values_of`) -> the index of the last element that
        has it, as a dict built in order would have it (read-only: it may be shared)."""
        stored = self._positions.get(key)
        if stored is None:
            stored = self._positions[key] = {
                value: i for i, value in enumerate(self.values_of(key)[: len(self._bounds)])
            }
        if not self._added:
            return stored
        first = len(self._bounds)
        return {**stored, **{_get(x, key): first + i for i, x in enumerate(self._added)}}

    def to_json(self) -> bytes:
        """The array's compact JSON."""
        if not self._added:
            return bytes(self._text)
        added = b",".join(orjson.dumps(x, default=_fragment) for x in self._added)
        head = memoryview(self._text)[:-1]  # the text is exactly the array: it ends with "]"
        return b"".join((head, b"," if self._bounds else b"", added, b"]"))


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else None


def _fragment(value: Any) -> Any:
    if isinstance(value, LazyArray):
        return orjson.Fragment(value.to_json())
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


_KEYED: dict[str, Any] = {}


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
