"""Object stores: where graveler keeps bytes (range/metarange files, data objects).

:func:`open_object_store` turns a storage-namespace URI into a backend:

* ``file:///abs/path`` or a plain absolute path -> :class:`~.local.LocalObjectStore`
* ``s3://bucket/prefix`` -> :class:`~.s3.S3ObjectStore` (needs boto3; options are passed on)
* ``mem://name`` -> the process-wide :class:`~.memory.MemoryObjectStore` called ``name``
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import unquote, urlsplit

from graveler.core.errors import InvalidURI
from graveler.storage.objectstore._io import RangeReader, stored_sha256
from graveler.storage.objectstore.keys import validate_key
from graveler.storage.objectstore.port import ObjectInfo, ObjectStore, ObjectWriter

__all__ = [
    "ObjectInfo",
    "ObjectStore",
    "ObjectWriter",
    "RangeReader",
    "join_uri",
    "open_object_store",
    "stored_sha256",
    "validate_key",
]


def _no_options(scheme: str, options: dict[str, Any]) -> None:
    if options:
        names = ", ".join(sorted(options))
        raise InvalidURI(f"{scheme} object stores take no options (got {names})")


def _open_file(uri: str, options: dict[str, Any]) -> ObjectStore:
    from graveler.storage.objectstore.local import LocalObjectStore

    _no_options("file://", options)
    if uri.startswith("/"):
        return LocalObjectStore(os.path.normpath(uri))
    parts = urlsplit(uri)
    if parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        raise InvalidURI(f"file URI {uri!r} must look like file:///absolute/path")
    path = unquote(parts.path)
    if not path.startswith("/"):
        raise InvalidURI(f"file URI {uri!r} must hold an absolute path")
    return LocalObjectStore(os.path.normpath(path))


def _open_s3(uri: str, options: dict[str, Any]) -> ObjectStore:
    parts = urlsplit(uri)
    if not parts.netloc or parts.query or parts.fragment:
        raise InvalidURI(f"S3 URI {uri!r} must look like s3://bucket/optional/prefix")
    try:
        from graveler.storage.objectstore.s3 import S3ObjectStore
    except ImportError as exc:
        raise InvalidURI(f"{uri!r} needs boto3: pip install 'graveler[s3]'") from exc
    return S3ObjectStore(parts.netloc, unquote(parts.path), **options)


def _open_memory(uri: str, options: dict[str, Any]) -> ObjectStore:
    from graveler.storage.objectstore.memory import SCHEME, open_memory_store

    _no_options("mem://", options)
    name = uri[len(SCHEME) :].rstrip("/")
    if not name:
        raise InvalidURI(f"memory URI {uri!r} needs a name: mem://name")
    return open_memory_store(name)


def open_object_store(uri: str, **options: Any) -> ObjectStore:
    """The object store rooted at ``uri``; raises :class:`InvalidURI` for an unknown scheme or a
    malformed URI. ``options`` are backend keyword arguments (only S3 takes any:
    ``endpoint_url``, ``region``, ``max_attempts``, credentials...)."""
    if not isinstance(uri, str) or not uri:
        raise InvalidURI(f"storage URI must be a non-empty string, got {uri!r}")
    if uri.startswith("/") or uri.startswith("file:"):
        return _open_file(uri, options)
    if uri.startswith("s3://"):
        return _open_s3(uri, options)
    if uri.startswith("mem://"):
        return _open_memory(uri, options)
    scheme = uri.split("://", 1)[0] if "://" in uri else None
    if scheme is None:
        raise InvalidURI(
            f"storage URI {uri!r} is neither an absolute path nor a file://, s3:// or mem:// URI"
        )
    raise InvalidURI(f"unsupported storage scheme {scheme!r} in {uri!r}; use file, s3 or mem")


def join_uri(uri: str, key: str) -> str:
    """The URI of ``key`` inside the store rooted at ``uri`` (``s3://b/p`` + ``k`` -> ``s3://b/p/k``)."""
    validate_key(key)
    return uri.rstrip("/") + "/" + key
