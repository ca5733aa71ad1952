"""Reading an S3 response body that may break off: :class:`ResumingBody` re-requests the rest
with a ranged GET from where the read stopped. botocore retries requests, not the reading of
their bodies."""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError

from graveler.core.errors import StorageError

#: How often in a row a response body that breaks off mid-read is re-requested.
BODY_READ_ATTEMPTS = 3


class ResumingBody(io.RawIOBase):
    """A raw reader over a botocore StreamingBody. A body that breaks off mid-read is resumed
    with a ranged GET from the current offset (``reopen``), up to BODY_READ_ATTEMPTS
    consecutive times; then the error escapes as StorageError."""

    def __init__(self, body: Any, reopen: Callable[[int], Any], describe: str) -> None:
        self._body = body
        self._reopen = reopen
        self._describe = describe
        self._pos = 0
        self._failures = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while True:
            try:
                data = self._body.read(len(view))
                break
            except BotoCoreError as exc:
                self._resume(exc)
        self._failures = 0
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def _resume(self, exc: BotoCoreError) -> None:
        self._failures += 1
        if self._failures >= BODY_READ_ATTEMPTS:
            raise StorageError(
                f"reading {self._describe} broke off {self._failures} times in a row: {exc}"
            ) from exc
        with contextlib.suppress(Exception):
            self._body.close()
        time.sleep(0.05 * 2**self._failures)
        self._body = self._reopen(self._pos)

    def close(self) -> None:
        if not self.closed:
            self._body.close()
        super().close()
