"""A request body as a blocking file for a worker thread, fed from the event loop.

Interfaces hand a body to the engine (``Repository.put`` reads a file) on a worker thread,
while the body itself arrives on the event loop. :class:`ThreadBodyReader` bridges the two:
pieces are gathered on the loop in batches (each interface says how, with its own
``gather`` coroutine), the next batch while the thread hashes and writes this one, and
``read`` hands the pieces out as they came (a short read when a piece is smaller than asked:
no copying).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import io
from collections.abc import Callable, Coroutine
from typing import Any

#: The next batch of a body's pieces, and whether the body ended with it.
Gather = Callable[[], Coroutine[Any, Any, tuple[list[bytes], bool]]]


class ThreadBodyReader(io.RawIOBase):
    """A blocking, read-only file over a body whose batches ``gather`` collects on ``loop``.
    ``complete`` says whether the body was read to its end; :meth:`close` (from the loop)
    stops a gathering still running. Errors raised by ``gather`` (a client that went away,
    a timeout) reach the reading thread."""

    def __init__(self, gather: Gather, loop: asyncio.AbstractEventLoop) -> None:
        self._gather = gather
        self._loop = loop
        self._ready: collections.deque[bytes] = collections.deque()
        self._next: concurrent.futures.Future[tuple[list[bytes], bool]] | None = None
        self.complete = False

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        while not self._ready and not self.complete:
            self._take()
        if not self._ready:
            return b""
        if size is None or size < 0:
            out = b"".join(self._ready)
            self._ready.clear()
            return out
        piece = self._ready.popleft()
        if len(piece) > size:
            piece, rest = piece[:size], piece[size:]
            self._ready.appendleft(rest)
        return piece

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        piece = self.read(len(buffer))
        buffer[: len(piece)] = piece
        return len(piece)

    def close(self) -> None:
        if self._next is not None:
            self._next.cancel()
            self._next = None
        super().close()

    def _take(self) -> None:
        """Wait for the next batch (on the worker thread); start gathering the one after."""
        if self._next is None:
            self._next = asyncio.run_coroutine_threadsafe(self._gather(), self._loop)
        batch, self.complete = self._next.result()
        self._ready.extend(batch)
        self._next = None
        if not self.complete:
            self._next = asyncio.run_coroutine_threadsafe(self._gather(), self._loop)
