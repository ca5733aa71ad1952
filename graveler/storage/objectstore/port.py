"""The ObjectStore port: the only way graveler touches bytes in a storage namespace.

Keys are ``/``-separated relative paths (``_graveler/ab12...``, ``data/2f/...``). A key never
starts with ``/``, never contains an empty, ``.`` or ``..`` component and never contains NUL;
backends refuse such keys with :class:`graveler.core.errors.InvalidKey` so no key can escape the
store's root.

Contracts shared by every backend (checked by ``tests/objectstore/test_conformance.py``):

* ``put`` is atomic: a reader sees the old object, or the complete new one, never a prefix.
  ``data`` is ``bytes`` or a binary file-like object read in chunks (streamed, never slurped).
* ``get``/``open``/``read_range``/``stat`` raise :class:`ObjectNotFound` for a missing key.
* ``put_if_absent`` creates an object only when none exists at the key, atomically: of
  several concurrent callers exactly one gets True, the others False, and the object is the
  winner's (used for the repository's ownership marker, :mod:`graveler.storage.namespaces`).
* ``delete`` of a missing key is not an error.
* ``list`` yields every object whose key starts with ``prefix`` (a plain string prefix, not a
  directory), recursively, sorted by key.
* Transient backend failures are retried inside the backend; what escapes is
  :class:`StorageError` (or a more specific :class:`GravelerError`).
* ``open_writer`` is the push-style twin of ``put``: bytes are *written to* an
  :class:`ObjectWriter`, which hashes them (SHA-256) and counts them on the way. Nothing
  appears under the key before ``commit``; ``commit`` publishes atomically (as ``put``) and
  returns when the object is durable; ``abort`` (or leaving a ``with`` block with an
  exception, or closing the writer uncommitted) discards everything written. With
  ``fresh=True`` the caller promises the key is a new, unique name that no reader knows
  before ``commit`` (a new physical address): a backend may then write in place, and a
  reader that looks before ``commit`` may see a partial object. With ``durable=False``,
  ``commit`` publishes the object but may return before it is durable; ``sync(keys)`` then
  makes all such objects durable at once (a batch pays for durability once; backends whose
  commits are always durable do nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """What a store knows about one object."""

    key: str
    size: int
    mtime: datetime  # timezone-aware, UTC


class ObjectWriter(Protocol):
    """A push-style upload of one object (see the module docstring for the contract).
    Also a writable binary file object (``io.RawIOBase``), so libraries that write to
    files (pyarrow, pandas) can write into it directly."""

    @property
    def key(self) -> str: ...

    @property
    def size(self) -> int:
        """Bytes written so far."""
        ...

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Append ``data``; returns its length. ValueError after commit or abort."""
        ...

    def sha256(self) -> str:
        """Hex SHA-256 of the bytes written so far."""
        ...

    def commit(self) -> ObjectInfo:
        """Publish the object atomically and durably. On failure everything written is
        discarded and the error propagates. Committing twice returns the same info."""
        ...

    def abort(self) -> None:
        """Discard everything written (a no-op after commit or a first abort)."""
        ...

    def __enter__(self) -> ObjectWriter: ...

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        """Commit when the block ends normally, abort when it raises."""
        ...


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

    def open_writer(self, key: str, *, fresh: bool = False, durable: bool = True) -> ObjectWriter:
        """A writer that creates or replaces ``key`` on ``commit`` (see the module docstring;
        ``fresh``: a new unique key nobody reads before commit; ``durable=False``: durable
        only once :meth:`sync` is called for it)."""
        ...

    def sync(self, keys: Iterable[str]) -> None:
        """Make durable the objects committed under ``keys`` by writers opened with
        ``durable=False``."""
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
