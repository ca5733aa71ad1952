"""The MD5 that S3's ETag needs, computed beside a write instead of before it.

A large write already hashes SHA-256 and copies bytes to the store on the writing thread;
MD5 on the same thread would add its whole cost. :class:`EtagHasher` hands pieces of at
least :data:`BESIDE` bytes to a thread of its own (hashlib releases the GIL on large
buffers), through a short queue that keeps their order, so a large object costs the slower
of the two hashes rather than their sum. The first piece is hashed in place: an object of
one piece (every body the gateway reads whole) never pays for starting a thread.
"""

from __future__ import annotations

import hashlib
import queue
import threading

#: Pieces after the first at least this large go to the MD5 thread (once it runs, every
#: later piece does).
BESIDE = 64 << 10
#: Pieces waiting for the MD5 thread at most (then the writer waits).
DEPTH = 4


class EtagHasher:
    """MD5 of the pieces fed in order. :meth:`hexdigest` waits for every piece;
    :meth:`close` (always, e.g. in a ``finally``) stops the thread if the write failed."""

    def __init__(self) -> None:
        self._md5 = hashlib.md5(usedforsecurity=False)
        self._queue: queue.Queue[bytes | None] | None = None
        self._thread: threading.Thread | None = None
        self._first = True

    def update(self, piece: bytes) -> None:
        first, self._first = self._first, False
        if self._queue is None and (first or len(piece) < BESIDE):
            self._md5.update(piece)
            return
        if self._queue is None:
            self._queue = queue.Queue(DEPTH)
            self._thread = threading.Thread(target=self._run, name="graveler-md5", daemon=True)
            self._thread.start()
        self._queue.put(piece)

    def hexdigest(self) -> str:
        self.close()
        return self._md5.hexdigest()

    def close(self) -> None:
        if self._queue is not None and self._thread is not None:
            self._queue.put(None)
            self._thread.join()
        self._queue = self._thread = None

    def _run(self) -> None:
        assert self._queue is not None
        pieces = self._queue
        while (piece := pieces.get()) is not None:
            self._md5.update(piece)
