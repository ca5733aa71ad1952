"""Push-style streamed uploads over the engine's pull-style ``ObjectStore.put``.

``ObjectStore.put(key, reader)`` *reads* its data, while a file opened with ``"wb"`` is
*written to*. :class:`StreamedUpload` joins the two with a bounded pipe: the writer hands over
blocks, a background thread runs ``put`` over a reader of that pipe and hashes the bytes on
the way. At most ``max_blocks`` blocks wait in the pipe, so memory stays bounded by about
``(max_blocks + 2) * block size`` whatever the object's size; a writer faster than the store
simply blocks.

Contract: call :meth:`StreamedUpload.send` any number of times, then exactly one of
:meth:`finish` (returns size and sha256; raises the store's error, if any) or :meth:`abort`
(the store discards its partial object; nothing is left behind).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from dataclasses import dataclass
from datetime import datetime

from graveler.objects import HashingReader
from graveler.objectstore import ObjectInfo, ObjectStore

_EOF = b""
_POLL_SECONDS = 0.05


class UploadAborted(Exception):
    """Raised inside the upload thread's reader to make the store abandon the object."""


class _BlockPipe:
    """The reading end handed to ``ObjectStore.put``: ``read(n)`` returns at most ``n`` bytes
    and ``b""`` only at the end. Blocks arrive through a bounded queue."""

    def __init__(self, max_blocks: int) -> None:
        self.blocks: queue.Queue[bytes | memoryview] = queue.Queue(maxsize=max_blocks)
        self.aborted = threading.Event()
        self._current = memoryview(b"")
        self._done = False

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.aborted.is_set():
            raise UploadAborted("the upload was aborted by its writer")
        if not self._current and not self._done:
            block = self.blocks.get()
            if self.aborted.is_set():
                raise UploadAborted("the upload was aborted by its writer")
            self._done = len(block) == 0
            self._current = memoryview(block)
        if n is None or n < 0:
            n = len(self._current)
        out = bytes(self._current[:n])
        self._current = self._current[n:]
        return out


@dataclass(frozen=True, slots=True)
class UploadResult:
    size: int
    checksum: str  # hex sha256 of the bytes stored
    mtime: datetime  # as the store reported it


class StreamedUpload:
    """Streams blocks to ``store.put(address, ...)`` from a background thread."""

    def __init__(self, store: ObjectStore, address: str, *, max_blocks: int = 2) -> None:
        self.address = address
        self._pipe = _BlockPipe(max_blocks)
        self._reader = HashingReader(self._pipe)  # type: ignore[arg-type]
        self._error: BaseException | None = None
        self._info: ObjectInfo | None = None
        self._thread = threading.Thread(
            target=self._run, args=(store,), name=f"graveler-upload-{address}", daemon=True
        )
        self._thread.start()

    def _run(self, store: ObjectStore) -> None:
        try:
            self._info = store.put(self.address, self._reader)  # type: ignore[arg-type]
        except BaseException as exc:  # handed to the writer in finish()/send()
            self._error = exc

    def send(self, block: bytes | memoryview) -> None:
        """Queue one non-empty block; blocks while the pipe is full."""
        if len(block) == 0:
            return
        self._put(block)

    def finish(self) -> UploadResult:
        """Signal the end, wait for the store, and return what was stored."""
        self._put(_EOF)
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._info is not None
        return UploadResult(self._reader.size, self._reader.hexdigest(), self._info.mtime)

    def abort(self) -> None:
        """Make the store abandon the object and wait for the thread to stop."""
        self._pipe.aborted.set()
        # Wake a reader waiting for a block; a busy reader sees the flag on its next read.
        with contextlib.suppress(queue.Full):
            self._pipe.blocks.put_nowait(_EOF)
        self._thread.join()

    def _put(self, block: bytes | memoryview) -> None:
        while True:
            if self._error is not None or not self._thread.is_alive():
                self._thread.join()
                if self._error is not None:
                    raise self._error
                raise RuntimeError("the upload thread stopped before the end of the data")
            try:
                self._pipe.blocks.put(block, timeout=_POLL_SECONDS)
                return
            except queue.Full:
                continue
