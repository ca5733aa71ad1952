"""The ``content`` file of a ``multipart/form-data`` upload (how lakectl and the generated
SDKs upload), streamed: a blocking file that yields the part's bytes as the body is parsed
(python-multipart's streaming parser), so a large upload never sits in memory.

As in lakeFS, the first part named ``content`` is the object; its ``Content-Type`` is the
object's. A body without one is a 400.
"""

from __future__ import annotations

import collections
import io
from typing import Any

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from graveler.server.lakefs.errors import bad_request

FIELD = b"content"
PIECE = 1 << 20


def boundary_of(content_type: str) -> bytes | None:
    """The boundary of a ``multipart/form-data`` Content-Type, None for another type."""
    kind, options = parse_options_header(content_type)
    if kind != b"multipart/form-data":
        return None
    boundary = options.get(b"boundary")
    if not boundary:
        raise bad_request("multipart/form-data without a boundary")
    return boundary


class ContentPart(io.RawIOBase):
    """The ``content`` part of a form read from ``source`` (a blocking file)."""

    def __init__(self, source: Any, boundary: bytes) -> None:
        self._source = source
        self._ready: collections.deque[bytes] = collections.deque()
        self._name = b""
        self._headers: dict[bytes, bytes] = {}
        self._field = b""
        self._in_content = False
        self._done = False
        self._ended = False
        self.content_type = ""
        self._parser = MultipartParser(boundary, self._callbacks())

    def _callbacks(self) -> Any:
        def header_field(data: bytes, start: int, end: int) -> None:
            self._field += data[start:end]

        def header_value(data: bytes, start: int, end: int) -> None:
            key = self._field.lower()
            self._headers[key] = self._headers.get(key, b"") + data[start:end]

        def header_end() -> None:
            self._field = b""

        def headers_finished() -> None:
            _, options = parse_options_header(self._headers.get(b"content-disposition", b""))
            if options.get(b"name") == FIELD and not self._done:
                self._in_content = True
                self.content_type = self._headers.get(b"content-type", b"").decode("latin-1")

        def part_data(data: bytes, start: int, end: int) -> None:
            if self._in_content:
                self._ready.append(bytes(data[start:end]))

        def part_end() -> None:
            if self._in_content:
                self._in_content = False
                self._done = True
            self._headers = {}

        return {
            "on_header_field": header_field,
            "on_header_value": header_value,
            "on_header_end": header_end,
            "on_headers_finished": headers_finished,
            "on_part_data": part_data,
            "on_part_end": part_end,
        }

    def start(self) -> ContentPart:
        """Read up to the content part's first bytes (its headers known); 400 when the form
        has no ``content`` part."""
        while not self._in_content and not self._done:
            if not self._feed():
                raise bad_request("multipart upload missing key 'content'")
        return self

    def _feed(self) -> bool:
        if self._ended:
            return False
        data = self._source.read(PIECE)
        if not data:
            self._ended = True
            return False
        try:
            self._parser.write(data)
        except MultipartParseError as exc:
            raise bad_request(f"malformed multipart/form-data body: {exc}") from None
        return True

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        while not self._ready and (self._in_content or not self._done):
            if not self._feed():
                if self._in_content:
                    raise bad_request("the multipart/form-data body ends inside 'content'")
                break
        if not self._ready:
            self._drain()
            return b""
        piece = self._ready.popleft()
        if size is not None and 0 <= size < len(piece):
            piece, rest = piece[:size], piece[size:]
            self._ready.appendleft(rest)
        return piece

    def readinto(self, buffer: Any) -> int:
        piece = self.read(len(buffer))
        buffer[: len(piece)] = piece
        return len(piece)

    def _drain(self) -> None:
        """Read the rest of the body (the parts after ``content``), so the connection can
        carry the next request."""
        while self._feed():
            pass
