"""An in-process object store (``mem://name``), for tests and demos.

Stores opened by name through :func:`open_memory_store` live in a module-level registry, so
opening ``mem://x`` twice in one process gives the same store (and the same objects).
:func:`clear_memory_stores` empties that registry (tests call it between cases).
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO

from graveler.core.errors import InvalidURI, ObjectNotFound
from graveler.storage.objectstore._io import BaseObjectWriter, check_range, iter_chunks, utc_now
from graveler.storage.objectstore.keys import validate_key, validate_prefix
from graveler.storage.objectstore.port import ObjectInfo

SCHEME = "mem://"


@dataclass(frozen=True, slots=True)
class _Stored:
    data: bytes
    mtime: datetime


class MemoryObjectStore:
    """A thread-safe dict of ``key -> bytes``. Implements :class:`ObjectStore`.

    Every operation holds one lock for its whole critical section, so a ``put`` is atomic: it
    reads the caller's data completely (in chunks) before swapping the new value in.
    """

    def __init__(self, name: str = "default") -> None:
        if not name or "\x00" in name:
            raise InvalidURI(f"memory store name {name!r} must be non-empty and without NUL")
        self._name = name
        self._lock = threading.Lock()
        self._objects: dict[str, _Stored] = {}

    def __repr__(self) -> str:
        return f"MemoryObjectStore({self._name!r})"

    @property
    def uri(self) -> str:
        """``mem://<name>``."""
        return SCHEME + self._name

    def put(self, key: str, data: bytes | BinaryIO) -> ObjectInfo:
        """Store ``data`` under ``key``; readers see the old or the new value, never a mix."""
        validate_key(key)
        return self._store(key, b"".join(iter_chunks(data)))

    def open_writer(
        self, key: str, *, fresh: bool = False, durable: bool = True
    ) -> BaseObjectWriter:
        """A writer buffering the object in memory until ``commit`` stores it."""
        validate_key(key)
        return _MemoryWriter(self, key)

    def _store(self, key: str, value: bytes) -> ObjectInfo:
        stored = _Stored(value, utc_now())
        with self._lock:
            self._objects[key] = stored
        return ObjectInfo(key, len(value), stored.mtime)

    def put_if_absent(self, key: str, data: bytes) -> bool:
        """Store ``data`` under ``key`` unless something is there; True when stored."""
        validate_key(key)
        stored = _Stored(bytes(data), utc_now())
        with self._lock:
            if key in self._objects:
                return False
            self._objects[key] = stored
        return True

    def _lookup(self, key: str) -> _Stored:
        validate_key(key)
        with self._lock:
            stored = self._objects.get(key)
        if stored is None:
            raise ObjectNotFound(f"no object {key!r} in {self.uri}")
        return stored

    def sync(self, keys: Iterable[str]) -> None:
        """Nothing to do: every commit is already durable (as durable as this store gets)."""

    def get(self, key: str) -> bytes:
        """The whole object; ObjectNotFound if missing."""
        return self._lookup(key).data

    def open(self, key: str) -> BinaryIO:
        """A BytesIO over a snapshot of the object; ObjectNotFound if missing."""
        return io.BytesIO(self._lookup(key).data)

    def read_range(self, key: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset``; empty past the end; ObjectNotFound if missing."""
        check_range(offset, length)
        return self._lookup(key).data[offset : offset + length]

    def stat(self, key: str) -> ObjectInfo:
        """Size and mtime of ``key``; ObjectNotFound if missing."""
        stored = self._lookup(key)
        return ObjectInfo(key, len(stored.data), stored.mtime)

    def exists(self, key: str) -> bool:
        validate_key(key)
        with self._lock:
            return key in self._objects

    def delete(self, key: str) -> None:
        """Remove ``key``; a missing key is fine."""
        validate_key(key)
        with self._lock:
            self._objects.pop(key, None)

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """A sorted snapshot, taken at the call, of the objects under ``prefix``."""
        validate_prefix(prefix)
        with self._lock:
            snapshot = [
                ObjectInfo(k, len(v.data), v.mtime)
                for k, v in self._objects.items()
                if k.startswith(prefix)
            ]
        snapshot.sort(key=lambda info: info.key)
        return iter(snapshot)

    def local_path(self, key: str) -> str | None:
        """Always None: nothing of a memory store is on disk."""
        validate_key(key)
        return None


class _MemoryWriter(BaseObjectWriter):
    def __init__(self, store: MemoryObjectStore, key: str) -> None:
        super().__init__(key)
        self._store_to = store
        self._parts: list[bytes] = []

    def _write(self, view: memoryview) -> None:
        self._parts.append(bytes(view))

    def _publish(self) -> ObjectInfo:
        return self._store_to._store(self.key, b"".join(self._parts))

    def _discard(self) -> None:
        self._parts.clear()


_registry: dict[str, MemoryObjectStore] = {}
_registry_lock = threading.Lock()


def open_memory_store(name: str) -> MemoryObjectStore:
    """The process-wide store called ``name`` (created empty on first use)."""
    with _registry_lock:
        store = _registry.get(name)
        if store is None:
            store = _registry[name] = MemoryObjectStore(name)
        return store


def clear_memory_stores() -> None:
    """Forget every registered memory store (the next open of a name starts empty)."""
    with _registry_lock:
        _registry.clear()
