"""Writing object bytes into a storage namespace: unique physical addresses, streaming with
checksum and size computed on the way, and normalisation of linked addresses."""

from __future__ import annotations

import hashlib
import io
import uuid
from typing import BinaryIO

from graveler.errors import InvalidArgument, InvalidKey
from graveler.objectstore.keys import validate_key

DATA_PREFIX = "data/"


def new_physical_address() -> str:
    """A fresh key under ``data/``; never reused, so objects are write-once."""
    u = uuid.uuid4().hex
    return f"{DATA_PREFIX}{u[:2]}/{u}"


class HashingReader(io.RawIOBase):
    """Wraps a binary stream (or bytes), computing sha256 and size as it is read."""

    def __init__(self, data: bytes | BinaryIO) -> None:
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
    """A physical address relative to ``namespace``; refuses anything outside it."""
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
        return validate_key(address)
    except InvalidKey as exc:
        raise InvalidArgument(
            f"physical address {address!r} does not stay inside {namespace}: {exc}"
        ) from exc


def full_address(namespace: str, relative: str) -> str:
    return namespace.rstrip("/") + "/" + relative
