"""Executor-side access to a repository's storage namespace (no database needed).

Executors get the namespace URI and store options in their task description and open the
object store themselves; one store per namespace is kept per Python worker process. Local
namespaces are read and written in place through :meth:`ObjectStore.local_path`; other stores
are read with ranged GETs, so Parquet footers and row groups are fetched, not whole objects.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Mapping
from typing import Any

from graveler.objectstore import ObjectStore, open_object_store

_stores: dict[tuple[str, tuple[tuple[str, str], ...]], ObjectStore] = {}
_lock = threading.Lock()


def store_for(namespace: str, options: Mapping[str, str]) -> ObjectStore:
    """The (cached) object store of ``namespace``."""
    key = (namespace, tuple(sorted(options.items())))
    with _lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = open_object_store(namespace, **dict(options))
        return store


class RangeReader(io.RawIOBase):
    """A seekable, read-only file over ``store.read_range`` (for stores without local paths)."""

    def __init__(self, store: ObjectStore, key: str, size: int) -> None:
        self._store = store
        self._key = key
        self._size = size
        self._pos = 0

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

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self._size - self._pos
        if size <= 0 or self._pos >= self._size:
            return b""
        data = self._store.read_range(self._key, self._pos, size)
        self._pos += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def open_source(store: ObjectStore, key: str, size: int) -> Any:
    """Something pyarrow readers accept: a local path, or a ranged-read file object."""
    path = store.local_path(key)
    if path is not None:
        return path
    import pyarrow as pa

    return pa.PythonFile(RangeReader(store, key, size), mode="r")
