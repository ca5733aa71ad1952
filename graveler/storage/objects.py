"""Object bytes in a storage namespace: unique physical addresses, streaming with checksum and
size computed on the way (writing) or verified on the way (reading), and normalisation of
linked addresses."""

from __future__ import annotations

import base64
import hashlib
import io
import os
from dataclasses import replace
from typing import BinaryIO

from graveler.core.errors import CorruptFile, InvalidArgument, InvalidKey
from graveler.storage.committed.files import TREE_PREFIX
from graveler.storage.entry import ObjectEntry
from graveler.storage.objectstore.keys import validate_key
from graveler.storage.objectstore.port import ObjectStore

DATA_PREFIX = "data/"


def new_physical_address() -> str:
    """A fresh key under ``data/``; never reused, so objects are write-once. It has lakeFS's
    shape, ``data/`` then two names of 20 base32hex characters (``0-9a-v``), which lakeFS's
    tools recognise as an object's address: the first is one of 256 shards (as many folders
    as a local namespace holds under ``data/``), the second 100 random bits."""
    raw = os.urandom(14)
    name = base64.b32hexencode(raw[1:]).decode("ascii")[:20].lower()
    return f"{DATA_PREFIX}{raw[0]:020x}/{name}"


class HashingReader(io.RawIOBase):
    """Wraps a binary stream (or bytes), computing sha256 and size as it is read."""

    def __init__(self, data: bytes | BinaryIO) -> None:
        if not isinstance(data, bytes | bytearray) and not callable(getattr(data, "read", None)):
            raise InvalidArgument(
                f"object data must be bytes or a binary file-like object, not {type(data).__name__}"
            )
        self._src: BinaryIO = io.BytesIO(data) if isinstance(data, bytes | bytearray) else data
        self._hash = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        chunk = self._src.read(n)
        if chunk is None:
            return b""
        self._hash.update(chunk)
        self.size += len(chunk)
        return bytes(chunk)

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        chunk = self.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def normalize_address(namespace: str, address: str) -> str:
    """The one check of a physical address given by a caller (``link``,
    ``make_linked_entry``, ``stage_entries``, ``import_entries``): the address relative to
    ``namespace``. Accepts a relative key or a URI/absolute path spelled with the namespace's
    own prefix; refuses (InvalidArgument) anything outside the namespace, any ``..`` or empty
    component, and graveler's own metadata area ``_graveler/``."""
    if not isinstance(address, str) or not address:
        raise InvalidArgument("physical address is empty")
    root = namespace.rstrip("/") + "/"
    if "://" in address or address.startswith("/"):
        candidate = address if "://" in address else "file://" + address
        if not candidate.startswith(root):
            raise InvalidArgument(
                f"physical address {address!r} is outside the repository namespace {namespace}"
            )
        address = candidate[len(root) :]
    try:
        validate_key(address)
    except InvalidKey as exc:
        raise InvalidArgument(
            f"physical address {address!r} does not stay inside {namespace}: {exc}"
        ) from exc
    if address.startswith(TREE_PREFIX):
        raise InvalidArgument(
            f"physical address {address!r} is in {TREE_PREFIX}, graveler's own metadata in "
            f"{namespace}; link data objects only"
        )
    return address


def checked_entry(namespace: str, entry: ObjectEntry) -> ObjectEntry:
    """``entry`` with its physical address checked by :func:`normalize_address` (and made
    relative when it was given as a URI inside ``namespace``)."""
    address = normalize_address(namespace, entry.physical_address)
    return entry if address == entry.physical_address else replace(entry, physical_address=address)


def full_address(namespace: str, relative: str) -> str:
    return namespace.rstrip("/") + "/" + relative


def read_verified(store: ObjectStore, entry: ObjectEntry) -> bytes:
    """The bytes of ``entry``'s object; CorruptFile unless they are the recorded size and
    SHA-256."""
    data = store.get(entry.physical_address)
    check_bytes(data, entry)
    return data


def check_bytes(data: bytes, entry: ObjectEntry) -> None:
    """CorruptFile unless ``data`` is ``entry``'s recorded size and SHA-256."""
    _check(len(data), hashlib.sha256(data).hexdigest(), entry.size, entry.checksum, _what(entry))


def open_verified(store: ObjectStore, entry: ObjectEntry) -> BinaryIO:
    """A buffered stream of ``entry``'s object that raises CorruptFile at its end unless the
    bytes are the recorded size and SHA-256 (see :class:`VerifyingReader`)."""
    source = store.open(entry.physical_address)
    raw = VerifyingReader(source, entry.size, entry.checksum, _what(entry))
    return io.BufferedReader(raw, buffer_size=1 << 20)


def _what(entry: ObjectEntry) -> str:
    return f"object {entry.path!r} ({entry.physical_address})"


def _check(actual_size: int, actual_sum: str, size: int, checksum: str, what: str) -> None:
    if actual_size != size:
        raise CorruptFile(
            f"{what} has {actual_size} bytes but {size} were recorded: the stored object is "
            "damaged (run 'graveler fsck --verify-objects')"
        )
    if actual_sum != checksum:
        raise CorruptFile(
            f"{what} does not match its recorded SHA-256: the stored object is damaged "
            "(run 'graveler fsck --verify-objects')"
        )


class VerifyingReader(io.RawIOBase):
    """Streams an object's bytes and raises CorruptFile at end of stream when they are not the
    recorded size and SHA-256. Reads past the recorded size fail at once. Verification stops
    (silently) after a ``seek``, which the reader passes through when the source can seek."""

    def __init__(self, source: BinaryIO, size: int, checksum: str, what: str) -> None:
        self._src = source
        self._size = size
        self._checksum = checksum
        self._what = what
        self._hash: hashlib._Hash | None = hashlib.sha256()
        self._seen = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return bool(self._src.seekable())

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._hash = None
        return self._src.seek(offset, whence)

    def tell(self) -> int:
        return self._src.tell()

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        fill = getattr(self._src, "readinto", None)
        if fill is not None:  # straight into the caller's buffer (a file: no copy)
            n = fill(buffer) or 0
            chunk: bytes | memoryview = memoryview(buffer)[:n]
        else:
            chunk = self._src.read(len(buffer))
            n = len(chunk)
            buffer[:n] = chunk
        if self._hash is not None:
            self._seen += n
            self._hash.update(chunk)
            if self._seen > self._size or (n == 0 and len(buffer) > 0):
                _check(self._seen, self._hash.hexdigest(), self._size, self._checksum, self._what)
        return n

    def close(self) -> None:
        if not self.closed:
            self._src.close()
        super().close()
