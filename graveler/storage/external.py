"""Reading objects outside any namespace: the external addresses that ``import`` records.

An external address is a full URI: ``s3://bucket/key`` or ``file://`` plus a percent-encoded
absolute path. :class:`ExternalStores` turns one into an object store and a key in it, reusing
one S3 client per bucket (with the client's store options).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from graveler.core.errors import InvalidURI
from graveler.storage.objectstore import ObjectStore, open_object_store


def file_address(path: str) -> str:
    """The external address of a local file (an absolute path)."""
    return "file://" + quote(path)


def s3_address(bucket: str, key: str) -> str:
    return f"s3://{bucket}/{key}"


class ExternalStores:
    """Object stores for external addresses; thread-safe, stores cached."""

    def __init__(self, store_options: Mapping[str, Any] | None = None) -> None:
        self._options = dict(store_options or {})
        self._stores: dict[str, ObjectStore] = {}
        self._lock = threading.Lock()

    def locate(self, address: str) -> tuple[ObjectStore, str]:
        """The store holding ``address`` and its key there. Raises InvalidURI for anything but
        an ``s3://bucket/key`` or ``file:///abs/path`` URI."""
        parts = urlsplit(address)
        if parts.scheme == "s3" and parts.netloc and len(parts.path) > 1:
            return self.bucket(parts.netloc), parts.path[1:]
        if parts.scheme == "file" and parts.netloc in ("", "localhost"):
            path = unquote(parts.path)
            directory, name = os.path.split(path)
            if os.path.isabs(path) and name:
                return open_object_store(directory), name  # cheap: not cached
        raise InvalidURI(f"external address {address!r} is not an s3:// or file:/// object URI")

    def bucket(self, bucket: str) -> ObjectStore:
        """The store over a whole S3 bucket (keys are full object keys)."""
        return self._store(f"s3://{bucket}", self._options)

    def _store(self, root: str, options: Mapping[str, Any]) -> ObjectStore:
        with self._lock:
            store = self._stores.get(root)
            if store is None:
                store = self._stores[root] = open_object_store(root, **options)
            return store
