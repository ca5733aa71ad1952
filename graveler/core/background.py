"""One shared pool of threads for object I/O that a caller overlaps with its own work.

Reading, hashing, writing and fsyncing large objects release the GIL, so a merge can read
and check several metadata files at once, or have its result flushed to disk while it goes
on. Work submitted here must not wait for the result of other work submitted here (the
pool is small, and that work may still be queued); waiting for a lock that such work holds
only while it runs is fine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

#: Threads of the pool (shared by every repository of the process).
IO_THREADS = 4

_P = ParamSpec("_P")
_T = TypeVar("_T")
_pool: list[ThreadPoolExecutor] = []
_lock = threading.Lock()


def in_background(call: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> Future[_T]:
    """``call(*args, **kwargs)`` in the shared pool; its result or exception in the future."""
    with _lock:
        if not _pool:
            _pool.append(ThreadPoolExecutor(IO_THREADS, thread_name_prefix="graveler-io"))
        pool = _pool[0]
    return pool.submit(call, *args, **kwargs)
