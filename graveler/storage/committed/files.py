"""Reading and writing range and metarange files of one storage namespace.

Files live at ``<namespace>/_graveler/<id>`` where ``id`` is the file's content address: for
a range of layout v2 (:mod:`graveler.storage.committed.layout`, what the writer writes) the hash of
its blocks' entries, for a metarange or a range of layout v1 the hash
:class:`graveler.storage.committed.record.FileHasher` computes over its records. Reads go through
the shared :class:`TieredCache`; every decode recomputes the ID from the decoded file and refuses
a mismatch with :class:`CorruptFile`, so damaged bytes are never served.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from graveler.core.errors import CorruptFile, GravelerError, ObjectNotFound, StorageError
from graveler.core.model import EMPTY_METARANGE_ID
from graveler.storage.committed.cache import TieredCache
from graveler.storage.committed.layout import decode_v2, is_v2
from graveler.storage.committed.rangedata import RangeData
from graveler.storage.committed.record import (
    METARANGE_KIND,
    RANGE_KIND,
    RangeInfo,
    decode_range_info,
    decode_range_values,
    encode_range_info,
    file_id,
)
from graveler.storage.objectstore.port import ObjectStore
from graveler.storage.sstable import SstReader

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from graveler.storage.committed.rangebuild import BuiltRange

T = TypeVar("T")

TREE_PREFIX = "_graveler/"
# Python object overhead per decoded record (tuple, three bytes objects, dict and list slots,
# fingerprint).
_RECORD_OVERHEAD = 266


class MetarangeData:
    """A decoded metarange: range descriptors in key order."""

    __slots__ = ("id", "ids", "max_keys", "num_records", "ranges")

    def __init__(self, metarange_id: str, ranges: list[RangeInfo]) -> None:
        self.id = metarange_id
        self.ranges = ranges
        self.max_keys = [r.max_key for r in ranges]
        self.ids = [r.id for r in ranges]
        self.num_records = sum(r.num_records for r in ranges)

    def range_for(self, key: bytes) -> int:
        """Index of the only range that may hold ``key`` (== len(ranges) when past the end)."""
        return bisect_left(self.max_keys, key)


EMPTY_METARANGE = MetarangeData(EMPTY_METARANGE_ID, [])


class TreeFiles:
    """Range/metarange file access for one storage namespace."""

    def __init__(self, store: ObjectStore, cache: TieredCache):
        self.store = store
        self.cache = cache
        #: A local store is its own disk tier: a second copy of its files on the same kind of
        #: disk saves no reads, and writing it delays the fsyncs of a commit (ext4's ordered
        #: mode flushes it with them).
        self.disk_copies = not store.uri.startswith("file://")
        self.files_written = 0

    # --- reading -------------------------------------------------------------------------------

    def range(self, range_id: str) -> RangeData:
        hit = self.cache.peek(range_id)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        return self.cache.get(
            range_id,
            lambda: self._fetch(range_id),
            lambda data: decode_range_file(range_id, data),
            _range_cost,
            disk=self.disk_copies,
        )

    def metarange(self, metarange_id: str) -> MetarangeData:
        if metarange_id == EMPTY_METARANGE_ID:
            return EMPTY_METARANGE
        hit = self.cache.peek(metarange_id)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        return self.cache.get(
            metarange_id,
            lambda: self._fetch(metarange_id),
            lambda data: decode_metarange_file(metarange_id, data),
            lambda m: 64 + 200 * len(m.ranges),
            disk=self.disk_copies,
        )

    def _fetch(self, fid: str) -> bytes:
        try:
            return self.store.get(TREE_PREFIX + fid)
        except ObjectNotFound as exc:
            raise ObjectNotFound(
                f"tree file {fid} is missing from {self.store.uri}/{TREE_PREFIX}; "
                "the repository's storage namespace is damaged (run fsck)"
            ) from exc

    # --- writing -------------------------------------------------------------------------------

    def store_range(self, built: BuiltRange, *, flush: bool = False) -> Future[str]:
        """Publish a range file in the background (the returned future gives its key once it
        is stored; durable only after :meth:`write_metarange`) and cache it decoded.
        ``flush``: flush it to the disk there too, so that the tree's final sync finds it
        done (for the first few files of a tree: a large batch is flushed at once)."""
        self.cache.put_decoded(built.info.id, built.decoded, _range_cost(built.decoded))
        self.files_written += 1
        return _uploads().submit(self._publish, built.info.id, built.data, flush)

    def write_metarange(
        self, ranges: Sequence[RangeInfo], pending: Sequence[Future[str]] = ()
    ) -> str:
        """Write the metarange of ``ranges`` (key order); the empty tree has ID ``""``.
        Returns once it and the objects ``pending`` gives the keys of (range files, and what
        else was committed with ``durable=False`` for this tree) are all stored and durable
        (the first failure is raised), made durable together (``ObjectStore.sync``)."""
        stored = list(pending)
        mid = EMPTY_METARANGE_ID
        if ranges:
            keys = [r.max_key for r in ranges]
            values = [encode_range_info(r) for r in ranges]
            mid = file_id(METARANGE_KIND, keys, values)
            stored.append(self._write_file(mid, keys, values))
            self.cache.put_decoded(mid, MetarangeData(mid, list(ranges)), 64 + 200 * len(ranges))
        self.store.sync([future.result() for future in stored])
        return mid

    def _write_file(self, fid: str, keys: list[bytes], values: list[bytes]) -> Future[str]:
        """Build the SST in memory, then store it in the background."""
        from graveler.storage.sstable.builder import table_bytes

        data = table_bytes(keys, values, int(fid[:8], 16) or 1)
        self.files_written += 1
        return _uploads().submit(self._publish, fid, data)

    def _publish(self, fid: str, data: bytes, flush: bool = False) -> str:
        """Store the file, durable once its key is synced, and keep a disk-tier copy unless the
        store is local; returns its key.

        A new file is written as a fresh object (in place, flushed by the sync with its
        directory entry: nothing reads it before the commit that names it is recorded). When
        that fails, most often because the file is already there (the same tree content
        was written before, perhaps torn by a crash or still being written by another
        process), it is replaced atomically by a copy flushed before it is renamed in."""
        key = TREE_PREFIX + fid
        try:
            with self.store.open_writer(key, fresh=True, durable=False) as writer:
                writer.write(data)
        except StorageError:
            self.store.put(key, data)
        else:
            if flush:
                self.store.sync([key])
        if self.disk_copies:
            self.cache.put_bytes(fid, data)
        return key

    # --- verification --------------------------------------------------------------------------

    def verify_stored(self, fid: str, kind: str) -> None:
        """Fetch ``fid`` from the store (bypassing caches) and check it; raises CorruptFile."""
        data = self._fetch(fid)
        if kind == "range":
            decode_range_file(fid, data)
        else:
            decode_metarange_file(fid, data)


def decode_range_file(range_id: str, data: bytes) -> RangeData:
    """A range file of either layout, its content checked against its ID (CorruptFile)."""
    reader = _open_sst(range_id, data)
    if is_v2(reader):
        keys, values, layout = _guarded(range_id, lambda: decode_v2(range_id, reader))
        records = decode_range_values(keys, values)
        return RangeData.of(range_id, keys, values, records, layout.entries_size(), layout)
    keys, values = _guarded(range_id, reader.read_all)
    _check_id(range_id, RANGE_KIND, keys, values)
    records = decode_range_values(keys, values)
    size = sum(map(len, keys)) + sum(map(len, values))
    return RangeData.of(range_id, keys, values, records, size)


def decode_metarange_file(metarange_id: str, data: bytes) -> MetarangeData:
    keys, values = _read_sst(metarange_id, data)
    _check_id(metarange_id, METARANGE_KIND, keys, values)
    return MetarangeData(
        metarange_id, [decode_range_info(k, v) for k, v in zip(keys, values, strict=True)]
    )


def _read_sst(fid: str, data: bytes) -> tuple[list[bytes], list[bytes]]:
    reader = _open_sst(fid, data)
    return _guarded(fid, reader.read_all)


def _open_sst(fid: str, data: bytes) -> SstReader:
    return _guarded(fid, lambda: SstReader.from_bytes(data))


def _guarded(fid: str, read: Callable[[], T]) -> T:
    """``read()``, any failure reported as the file's corruption."""
    try:
        return read()
    except CorruptFile as exc:
        if str(exc).startswith("tree file "):
            raise
        raise CorruptFile(f"tree file {fid}: {exc}") from exc
    except GravelerError:
        raise
    except Exception as exc:  # a reader bug on hostile bytes must still surface as corruption
        raise CorruptFile(f"tree file {fid}: undecodable ({exc})") from exc


def _check_id(fid: str, kind: bytes, keys: list[bytes], values: list[bytes]) -> None:
    actual = file_id(kind, keys, values)
    if actual != fid:
        raise CorruptFile(f"tree file {fid}: content hashes to {actual}; refusing to serve it")


def _cost(size: int, count: int) -> int:
    return size + _RECORD_OVERHEAD * count


def _range_cost(r: RangeData) -> int:
    file_bytes = len(r.layout.data) if r.layout is not None else 0
    return _cost(r.nbytes, len(r.keys)) + file_bytes


#: Tree files stored at once by a process (their writes and fsyncs overlap; S3 uploads too).
UPLOAD_THREADS = 8
_uploader: ThreadPoolExecutor | None = None
_uploader_lock = threading.Lock()


def _uploads() -> ThreadPoolExecutor:
    global _uploader
    with _uploader_lock:
        if _uploader is None:
            from concurrent.futures import ThreadPoolExecutor

            _uploader = ThreadPoolExecutor(UPLOAD_THREADS, thread_name_prefix="graveler-tree")
        return _uploader
