"""Small I/O helpers shared by the object store backends, and the base of their writers."""

from __future__ import annotations

import contextlib
import hashlib
import io
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, BinaryIO

from graveler.core.errors import InvalidArgument
from graveler.storage.objectstore.port import ObjectInfo, ObjectStore

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


def stored_sha256(store: ObjectStore, key: str, chunk_size: int = 1 << 20) -> str:
    """The hex SHA-256 of the object ``key`` as ``store`` holds it, read once in chunks.
    Raises ObjectNotFound."""
    digest = hashlib.sha256()
    with store.open(key) as fh:
        while chunk := fh.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


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


class BaseObjectWriter(io.RawIOBase):
    """What every backend's :class:`~graveler.storage.objectstore.port.ObjectWriter` shares: hashing
    and counting as bytes are written, the open -> committed | aborted life cycle, and the
    file-object and context-manager protocols. A backend implements ``_write`` (take bytes),
    ``_publish`` (make the object appear durably; returns its info) and ``_discard`` (drop
    what was written; called at most once, never after a successful ``_publish``)."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self._key = key
        self._hash = hashlib.sha256()
        self._size = 0
        self._info: ObjectInfo | None = None
        self._done = False

    @property
    def key(self) -> str:
        return self._key

    @property
    def size(self) -> int:
        return self._size

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        """Append ``data`` (any bytes-like object); returns its length."""
        if self._done:
            raise ValueError(f"writer of {self._key!r} is already committed or aborted")
        view = memoryview(data).cast("B")
        if view.nbytes:
            self._hash.update(view)
            self._write(view)
            self._size += view.nbytes
        return view.nbytes

    def sha256(self) -> str:
        return self._hash.hexdigest()

    def commit(self) -> ObjectInfo:
        if self._info is not None:
            return self._info
        if self._done:
            raise ValueError(f"writer of {self._key!r} was aborted: nothing to commit")
        self._done = True
        try:
            self._info = self._publish()
        except BaseException:
            self._discard_quietly()
            raise
        finally:
            super().close()
        return self._info

    def abort(self) -> None:
        if self._done:
            return
        self._done = True
        self._discard_quietly()
        super().close()

    def close(self) -> None:
        """Closing a writer that was not committed aborts it: nothing is published."""
        self.abort()

    def __enter__(self) -> BaseObjectWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def _discard_quietly(self) -> None:
        """Best effort: a failed clean-up leaves an unreferenced object (removed by garbage
        collection) and must not hide the error that caused it."""
        with contextlib.suppress(Exception):
            self._discard()

    def _write(self, view: memoryview) -> None:
        raise NotImplementedError

    def _publish(self) -> ObjectInfo:
        raise NotImplementedError

    def _discard(self) -> None:
        raise NotImplementedError


class RangeReader(io.RawIOBase):
    """A seekable, read-only file over ``store.read_range(key, ...)`` of an object of ``size``
    bytes: what readers that seek (pyarrow's Parquet footer first) need from a store with no
    local paths. Wrap it in ``io.BufferedReader`` to batch small reads."""

    def __init__(self, store: ObjectStore, key: str, size: int) -> None:
        super().__init__()
        self._store, self._key, self._size, self._pos = store, key, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), max(0, self._size - self._pos))
        if want == 0:
            return 0
        data = self._store.read_range(self._key, self._pos, want)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)
