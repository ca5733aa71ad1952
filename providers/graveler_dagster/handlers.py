"""Type handlers: the plug-in point for storing more kinds of values with the IO manager.

The built-in formats (:mod:`graveler_dagster.formats`) store tables as Parquet and pickle the
rest. A :class:`TypeHandler` stores another kind of value its own way; a subclass of
:class:`graveler_dagster.GravelerIOManager` lists its handlers in ``type_handlers()``, which
are consulted before the built-in formats, in order:

.. code-block:: python

    class JsonHandler(TypeHandler):
        format = "json"
        content_type = "application/json"

        def handles(self, value):
            return isinstance(value, dict)

        def encode(self, value):
            return json.dumps(value).encode()

        def decode(self, data, typing_type):
            return json.loads(data)

    class MyIOManager(GravelerIOManager):
        def type_handlers(self):
            return [JsonHandler()]

The handler's ``format`` is recorded in the object's ``dagster/format`` metadata, and an
object written with it is loaded by the handler with that format (a value whose format no
handler and no built-in knows is refused). ``decode`` receives bytes from the lake: it must
treat them as data, never as code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from graveler.errors import InvalidArgument
from graveler_dagster import formats


class TypeHandler(ABC):
    """Stores values of one kind: ``format`` names it in the object's metadata (it may not be
    a built-in format name), ``content_type`` is the object's content type."""

    format: ClassVar[str]
    content_type: ClassVar[str] = "application/octet-stream"

    @abstractmethod
    def handles(self, value: Any) -> bool:
        """Whether this handler stores ``value``."""

    @abstractmethod
    def encode(self, value: Any) -> bytes:
        """The bytes stored for ``value``."""

    @abstractmethod
    def decode(self, data: bytes, typing_type: Any) -> Any:
        """The value stored as ``data``, for an input annotated ``typing_type``."""

    def rows(self, value: Any) -> int | None:
        """The row count recorded as ``dagster/row_count`` (None: not a table)."""
        return None


def check(handlers: Sequence[TypeHandler]) -> Sequence[TypeHandler]:
    """``handlers``, after refusing a format name taken by a built-in or by another handler."""
    seen: set[str] = set()
    for handler in handlers:
        name = getattr(handler, "format", None)
        if not name or name in (*formats.FRAME_FORMATS, "pickle") or name in seen:
            raise InvalidArgument(
                f"type handler {type(handler).__name__} needs its own format name, not {name!r}"
            )
        seen.add(name)
    return handlers


def encode(
    handlers: Sequence[TypeHandler], value: Any, pickle_secret: str | None = None
) -> formats.Encoded:
    """``value`` encoded by the first handler that handles it, else by the built-ins (a pickle
    signed with ``pickle_secret`` when given)."""
    for handler in handlers:
        if handler.handles(value):
            data = handler.encode(value)
            return formats.Encoded(data, handler.format, handler.content_type, handler.rows(value))
    return formats.encode(value, pickle_secret)


def find(handlers: Sequence[TypeHandler], written: str) -> TypeHandler | None:
    """The handler of format ``written``, or None (a built-in format)."""
    return next((h for h in handlers if h.format == written), None)
