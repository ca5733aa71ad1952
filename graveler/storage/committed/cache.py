"""Tiered cache for immutable tree files: RAM (decoded objects) over local disk over the store.

Range and metarange files never change once named, so nothing is ever invalidated: tiers only
evict, least recently used first, to stay within their byte budgets.

* RAM holds decoded files (whatever ``decode`` returns) with a caller-given cost in bytes.
* Disk holds raw file bytes under ``<directory>/<id[:2]>/<id>``, written atomically
  (temp file + rename); files left by earlier processes are adopted at start-up.
* A miss in both tiers fetches from the object store. Concurrent requests for one file share a
  single fetch and decode ("single flight").
* ``decode`` verifies content (it raises :class:`CorruptFile` when bytes do not hash to their
  name). A corrupt disk copy is deleted and the file refetched from the store; corrupt store
  bytes are never cached and the error propagates.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from graveler.core.errors import CorruptFile

T = TypeVar("T")

DEFAULT_RAM_BYTES = 512 * 1024 * 1024
DEFAULT_DISK_BYTES = 4 * 1024 * 1024 * 1024
#: Age after which a temporary file in the cache directory is taken as left by a dead process.
#: Younger ones may belong to another live process sharing the directory and are left alone.
STALE_TEMP_SECONDS = 3600.0


@dataclass
class CacheStats:
    ram_hits: int = 0
    disk_hits: int = 0
    fetches: int = 0
    corrupt_dropped: int = 0


class _Flight(Generic[T]):
    """One load in flight: its leader publishes the value or the error, followers wait for
    it (what ``concurrent.futures.Future`` does, without importing that package on reads)."""

    __slots__ = ("_done", "_error", "_value")

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def set_result(self, value: T) -> None:
        self._value = value
        self._done.set()

    def set_exception(self, error: BaseException) -> None:
        self._error = error
        self._done.set()

    def result(self) -> T:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class _LruBytes:
    """An LRU map of key -> (value, cost) bounded by total cost. Not thread-safe by itself."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.items: OrderedDict[str, tuple[Any, int]] = OrderedDict()

    def put(self, key: str, value: Any, cost: int) -> list[str]:
        """Insert and return the keys evicted to make room."""
        old = self.items.pop(key, None)
        if old is not None:
            self.used -= old[1]
        self.items[key] = (value, cost)
        self.used += cost
        evicted: list[str] = []
        while self.used > self.budget and len(self.items) > 1:
            victim, (_, vcost) = self.items.popitem(last=False)
            self.used -= vcost
            evicted.append(victim)
        return evicted

    def pop(self, key: str) -> None:
        old = self.items.pop(key, None)
        if old is not None:
            self.used -= old[1]


class TieredCache:
    """Shared by every repository of a process; keyed by file ID (content address)."""

    def __init__(
        self,
        directory: str | None = None,
        *,
        ram_bytes: int = DEFAULT_RAM_BYTES,
        disk_bytes: int = DEFAULT_DISK_BYTES,
    ) -> None:
        self.directory = directory
        self.stats = CacheStats()
        self._ram = _LruBytes(ram_bytes)
        self._disk = _LruBytes(disk_bytes)
        self._lock = threading.Lock()
        self._inflight: dict[str, _Flight[Any]] = {}
        if directory is not None:
            os.makedirs(directory, exist_ok=True)
            self._adopt_disk_files()

    # --- reading -------------------------------------------------------------------------------

    def get(
        self,
        file_id: str,
        fetch: Callable[[], bytes],
        decode: Callable[[bytes], T],
        cost: Callable[[T], int],
        *,
        disk: bool = True,
    ) -> T:
        """The decoded file, from the fastest tier that has it. Not ``disk``: the file's own
        store is a local disk, so the disk tier neither serves nor keeps a copy of it."""
        hit = self.peek(file_id)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        return self._load_once(file_id, lambda: self._load(file_id, fetch, decode, disk), cost)

    def derived(self, name: str, build: Callable[[], T], cost: Callable[[T], int]) -> T:
        """A RAM-only object computed from cached files (e.g. an index), built once even under
        concurrent requests, evicted like any decoded file and never written to disk."""
        hit = self.peek(name)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        return self._load_once(name, build, cost)

    def peek(self, file_id: str) -> Any:
        """The decoded file if it is in RAM (marking it recently used), else None."""
        items = self._ram.items
        hit = items.get(file_id)
        if hit is None:
            return None
        try:  # noqa: SIM105 - contextlib.suppress costs ~0.3us on this hot path
            items.move_to_end(file_id)
        except KeyError:  # evicted by another thread meanwhile; the value is still valid
            pass
        self.stats.ram_hits += 1
        return hit[0]

    def _load_once(self, file_id: str, load: Callable[[], T], cost: Callable[[T], int]) -> T:
        with self._lock:
            hit = self._ram.items.get(file_id)
            if hit is not None:
                return hit[0]  # type: ignore[no-any-return]
            future = self._inflight.get(file_id)
            leader = future is None
            if future is None:
                future = self._inflight[file_id] = _Flight()
        if not leader:
            return future.result()  # type: ignore[no-any-return]
        try:
            value = load()
            self.put_decoded(file_id, value, cost(value))
            future.set_result(value)
            return value
        except BaseException as exc:
            future.set_exception(exc)
            raise
        finally:
            with self._lock:
                self._inflight.pop(file_id, None)

    def _load(
        self, file_id: str, fetch: Callable[[], bytes], decode: Callable[[bytes], T], disk: bool
    ) -> T:
        data = self._read_disk(file_id) if disk else None
        if data is not None:
            try:
                value = decode(data)
                self.stats.disk_hits += 1
                return value
            except CorruptFile:
                self.stats.corrupt_dropped += 1
                self.drop_disk(file_id)
        self.stats.fetches += 1
        data = fetch()
        value = decode(data)  # corrupt store bytes raise here and are never cached
        if disk:
            self.put_bytes(file_id, data)
        return value

    # --- writing -------------------------------------------------------------------------------

    def put_decoded(self, file_id: str, value: Any, cost: int) -> None:
        with self._lock:
            self._ram.put(file_id, value, cost)

    def put_bytes(self, file_id: str, data: bytes) -> None:
        """Store raw bytes in the disk tier (no-op without a directory)."""
        if self.directory is None:
            return
        path = self.path_of(file_id)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._register_disk(file_id, len(data))

    def drop(self, file_id: str) -> None:
        """Forget a file in both tiers."""
        with self._lock:
            self._ram.pop(file_id)
        self.drop_disk(file_id)

    def drop_disk(self, file_id: str) -> None:
        with self._lock:
            self._disk.pop(file_id)
        if self.directory is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path_of(file_id))

    def path_of(self, file_id: str) -> str:
        assert self.directory is not None
        return os.path.join(self.directory, file_id[:2], file_id)

    def clear_ram(self) -> None:
        with self._lock:
            self._ram = _LruBytes(self._ram.budget)

    # --- disk bookkeeping ----------------------------------------------------------------------

    def _read_disk(self, file_id: str) -> bytes | None:
        if self.directory is None:
            return None
        try:
            with open(self.path_of(file_id), "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            return None
        with self._lock:
            if file_id in self._disk.items:
                self._disk.items.move_to_end(file_id)
        return data

    def _register_disk(self, file_id: str, size: int) -> None:
        with self._lock:
            evicted = self._disk.put(file_id, None, size)
        for victim in evicted:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path_of(victim))

    def _adopt_disk_files(self) -> None:
        assert self.directory is not None
        found: list[tuple[float, str, int]] = []
        for sub in os.scandir(self.directory):
            if not sub.is_dir():
                continue
            for entry in os.scandir(sub.path):
                if entry.name.startswith(".tmp-"):
                    _remove_if_stale(entry)
                    continue
                st = entry.stat()
                found.append((st.st_atime, entry.name, st.st_size))
        for _, name, size in sorted(found):
            self._register_disk(name, size)


def _remove_if_stale(entry: os.DirEntry[str]) -> None:
    """Delete a temporary file older than STALE_TEMP_SECONDS (several processes may share a
    cache directory: a fresh temporary file may be another process's write in progress)."""
    with contextlib.suppress(OSError):
        if time.time() - entry.stat().st_mtime > STALE_TEMP_SECONDS:
            os.unlink(entry.path)
