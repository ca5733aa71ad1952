"""Small I/O helpers shared by the object store backends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import BinaryIO

from graveler.errors import InvalidArgument

#: How much a backend reads from a caller's file-like object at a time.
CHUNK_SIZE = 1 << 20


def iter_chunks(data: bytes | BinaryIO, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """Yield ``data`` in pieces of at most ``chunk_size`` bytes.

    ``bytes`` (or ``bytearray``/``memoryview``) are yielded whole; a file-like object is read
    with ``read(chunk_size)`` until it returns an empty result, so it is never slurped.
    """
    if isinstance(data, bytes | bytearray | memoryview):
        yield bytes(data)
        return
    read = getattr(data, "read", None)
    if read is None:
        raise InvalidArgument(
            f"object data must be bytes or a binary file-like object, not {type(data).__name__}"
        )
    while True:
        chunk = read(chunk_size)
        if not chunk:
            return
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise InvalidArgument("object data file-like returned text; open it in binary mode")
        yield bytes(chunk)


class ExactReader:
    """A reader whose ``read(n)`` returns exactly ``n`` bytes until EOF (s3transfer needs that:
    a short read would make a too-small multipart part). Reads the source in chunks of at most
    :data:`CHUNK_SIZE` and counts the bytes it hands out in ``size``. Not seekable on purpose,
    so consumers stream it."""

    def __init__(self, source: BinaryIO) -> None:
        self._chunks = iter_chunks(source)
        self._pending = b""
        self.size = 0

    def read(self, amount: int = -1) -> bytes:
        parts = [self._pending]
        have = len(self._pending)
        while amount < 0 or have < amount:
            chunk = next(self._chunks, b"")
            if not chunk:
                break
            parts.append(chunk)
            have += len(chunk)
        data = b"".join(parts)
        if amount >= 0:
            data, self._pending = data[:amount], data[amount:]
        else:
            self._pending = b""
        self.size += len(data)
        return data


def check_range(offset: int, length: int) -> None:
    """Raise InvalidArgument unless ``offset`` and ``length`` are non-negative."""
    if offset < 0 or length < 0:
        raise InvalidArgument(
            f"read_range needs a non-negative offset and length, got {offset} and {length}"
        )


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def from_timestamp(seconds: float) -> datetime:
    """A POSIX timestamp as a timezone-aware UTC datetime."""
    return datetime.fromtimestamp(seconds, tz=UTC)
