"""The ObjectStore port: the only way graveler touches bytes in a storage namespace.

Keys are ``/``-separated relative paths (``_graveler/ab12...``, ``data/2f/...``). A key never
starts with ``/``, never contains an empty, ``.`` or ``..`` component and never contains NUL;
backends refuse such keys with :class:`graveler.errors.InvalidKey` so no key can escape the
store's root.

Contracts shared by every backend (checked by ``tests/objectstore/test_conformance.py``):

* ``put`` is atomic: a reader sees the old object, or the complete new one, never a prefix.
  ``data`` is ``bytes`` or a binary file-like object read in chunks (streamed, never slurped).
* ``get``/``open``/``read_range``/``stat`` raise :class:`ObjectNotFound` for a missing key.
* ``put_if_absent`` creates an object only when none exists at the key, atomically: of
  several concurrent callers exactly one gets True, the others False, and the object is the
  winner's (used for the repository's ownership marker, :mod:`graveler.namespaces`).
* ``delete`` of a missing key is not an error.
* ``list`` yields every object whose key starts with ``prefix`` (a plain string prefix, not a
  directory), recursively, sorted by key.
* Transient backend failures are retried inside the backend; what escapes is
  :class:`StorageError` (or a more specific :class:`GravelerError`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """What a store knows about one object."""

    key: str
    size: int
    mtime: datetime  # timezone-aware, UTC


@runtime_checkable
class ObjectStore(Protocol):
    """A flat namespace of immutable-by-convention byte objects."""

    @property
    def uri(self) -> str:
        """The root of this store as a URI (``file:///...``, ``s3://bucket/prefix``, ``mem://name``)."""
        ...

    def put(self, key: str, data: bytes | BinaryIO) -> ObjectInfo:
        """Atomically create or replace ``key`` with ``data``; returns the stored object's info."""
        ...

    def put_if_absent(self, key: str, data: bytes) -> bool:
        """Create ``key`` with ``data`` unless an object is already there (then nothing is
        written). True when this call created it. Atomic against concurrent callers."""
        ...

    def get(self, key: str) -> bytes:
        """The whole object."""
        ...

    def open(self, key: str) -> BinaryIO:
        """A streaming, closeable reader over the object (use as a context manager)."""
        ...

    def read_range(self, key: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes starting at ``offset`` (shorter at end of object)."""
        ...

    def stat(self, key: str) -> ObjectInfo: ...

    def exists(self, key: str) -> bool: ...

    def delete(self, key: str) -> None:
        """Remove ``key``; a missing key is fine."""
        ...

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Objects whose key starts with ``prefix``, sorted by key."""
        ...

    def local_path(self, key: str) -> str | None:
        """The path of ``key`` on local disk when the backend is a local directory, else None.

        Lets bulk writers (Spark) write files in place and then link them."""
        ...
