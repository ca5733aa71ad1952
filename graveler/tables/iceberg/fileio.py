"""A pyiceberg ``FileIO`` over a repository's object store.

Table files are named by URI in Iceberg metadata; this IO maps each URI to its address in
the storage namespace (:func:`graveler.tables.iceberg.names.address_of`, which refuses
anything outside the namespace's ``data/`` area) and reads or writes it through the
repository's :class:`~graveler.storage.objectstore.port.ObjectStore`, so the catalog and the merge
work the same on local disk and on S3. Files are immutable and small (metadata, manifests),
so reads load them whole and keep a bounded cache; writes go to fresh keys only and are
recorded (:attr:`NamespaceIO.written`) so that the caller can stage them as tree entries.
"""

from __future__ import annotations

import io
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any

from pyiceberg.io import FileIO, InputFile, InputStream, OutputFile, OutputStream

from graveler.core.background import in_background
from graveler.core.errors import InvalidArgument, ObjectNotFound
from graveler.storage.objectstore.port import ObjectInfo, ObjectStore, ObjectWriter
from graveler.tables.iceberg.names import address_of

#: Bytes of small table files kept per IO (metadata files and manifests are read repeatedly
#: within one commit or merge).
CACHE_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """A file this IO wrote: everything an entry for it needs."""

    address: str
    size: int
    checksum: str
    mtime: datetime


class NamespaceIO(FileIO):
    """Reads and writes table files of one storage namespace (see the module docstring)."""

    def __init__(self, store: ObjectStore, namespace: str, *, deferred: bool = False) -> None:
        """``deferred``: a write returns before its file is durable, which it becomes in the
        background while the caller goes on; :attr:`flushing` has a future for each (its key
        once it is durable), which the caller waits for before anything refers to the
        files."""
        super().__init__({})
        self.store = store
        self.namespace = namespace
        self.deferred = deferred
        self.flushing: list[Future[str]] = []
        self.written: dict[str, WrittenFile] = {}
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached = 0

    def address(self, location: str) -> str:
        return address_of(self.namespace, location)

    def uri(self, address: str) -> str:
        return f"{self.namespace.rstrip('/')}/{address}"

    def new_input(self, location: str) -> InputFile:
        return _Input(location, self, self.address(location))

    def new_output(self, location: str) -> OutputFile:
        return _Output(location, self, self.address(location))

    def delete(self, location: str | InputFile | OutputFile) -> None:
        raise InvalidArgument(
            "table files are never deleted in place: garbage collection removes the ones no "
            "retained commit references"
        )

    def read(self, address: str) -> bytes:
        """The bytes at ``address`` (ObjectNotFound when missing)."""
        data = self._cache.get(address)
        if data is not None:
            self._cache.move_to_end(address)
            return data
        data = self.store.get(address)
        if len(data) <= CACHE_BYTES // 8:
            self._cache[address] = data
            self._cached += len(data)
            while self._cached > CACHE_BYTES:
                _, old = self._cache.popitem(last=False)
                self._cached -= len(old)
        return data

    def write(self, address: str, data: bytes) -> WrittenFile:
        """Store ``data`` as a new, durable object at ``address`` (a fresh, unique name)."""
        done = self._store_new(address, data)
        self.written[address] = done
        return done

    def write_later(
        self, address: str, chunks: Sequence[bytes | memoryview]
    ) -> Callable[[], WrittenFile]:
        """:meth:`write` of the concatenated ``chunks``, done in a background thread while
        the caller goes on: the name is taken here (an existing one is refused at once), the
        bytes are hashed, written and flushed there (deferred: see :attr:`flushing`). The
        answer waits for the file to be written and returns what :meth:`write` does; the
        chunks must not change meanwhile."""
        writer = self._open(address)
        committed: Future[ObjectInfo] = Future()

        def store() -> str:
            try:
                for chunk in chunks:
                    writer.write(chunk)
                committed.set_result(writer.commit())
            except BaseException as exc:
                writer.abort()
                committed.set_exception(exc)
                raise
            return self._flush(address)

        done = in_background(store)
        if self.deferred:
            self.flushing.append(done)

        def written() -> WrittenFile:
            info = committed.result()
            done = self.written[address] = WrittenFile(
                address, info.size, writer.sha256(), info.mtime
            )
            return done

        return written

    def _store_new(self, address: str, data: bytes) -> WrittenFile:
        with self._open(address) as writer:
            writer.write(data)
        info = writer.commit()
        if self.deferred:
            self.flushing.append(in_background(self._flush, address))
        return WrittenFile(address, info.size, writer.sha256(), info.mtime)

    def _open(self, address: str) -> ObjectWriter:
        return self.store.open_writer(address, fresh=True, durable=not self.deferred)

    def _flush(self, address: str) -> str:
        """Make a deferred write durable (a durable one already is); returns its key."""
        if self.deferred:
            self.store.sync([address])
        return address


class _Input(InputFile):
    def __init__(self, location: str, fio: NamespaceIO, address: str) -> None:
        super().__init__(location)
        self._io = fio
        self._address = address

    def __len__(self) -> int:
        return len(self._io.read(self._address))

    def exists(self) -> bool:
        try:
            self._io.read(self._address)
        except ObjectNotFound:
            return False
        return True

    def open(self, seekable: bool = True) -> InputStream:
        try:
            return io.BytesIO(self._io.read(self._address))
        except ObjectNotFound:
            raise FileNotFoundError(self.location) from None


class _Output(OutputFile):
    def __init__(self, location: str, fio: NamespaceIO, address: str) -> None:
        super().__init__(location)
        self._io = fio
        self._address = address

    def __len__(self) -> int:
        return self._io.written[self._address].size

    def exists(self) -> bool:
        return self._address in self._io.written or self._io.store.exists(self._address)

    def to_input_file(self) -> InputFile:
        return _Input(self.location, self._io, self._address)

    def create(self, overwrite: bool = False) -> OutputStream:
        if self.exists():
            raise FileExistsError(self.location)
        return _Sink(self._io, self._address)


class _Sink(io.BytesIO):
    """Buffers a small file and stores it when closed."""

    def __init__(self, fio: NamespaceIO, address: str) -> None:
        super().__init__()
        self._io = fio
        self._address = address

    def close(self) -> None:
        if not self.closed:
            data = self.getvalue()
            super().close()
            self._io.write(self._address, data)

    def __enter__(self) -> _Sink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        *rest: Any,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            super().close()
