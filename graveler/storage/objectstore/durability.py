"""What a local filesystem needs to make a new file durable, and the batch flush.

POSIX makes a new file durable when the file *and* its directory are fsynced. Some Linux
filesystems give more: their ``fsync`` of a newly created file also commits the directory
entry that names it, because the entry was recorded in the same (or an earlier) journal
transaction as the inode, and the journal commits transactions in order:

* ext4 (the create and the entry share a journal handle; without a journal, ext4 itself
  syncs the parent of a new inode on fsync);
* XFS (the log is forced up to the inode's last change, which is after the entry's);
* btrfs (fsync logs a new inode's names in its parents).

On those, :func:`fsync_covers_new_entry` is True and the writer of a new file skips the
directory fsync: one disk flush per ``put`` instead of two. Everywhere else (other or unknown
filesystems, other systems) the directory is fsynced as POSIX asks. Setting the environment
variable ``GRAVELER_FSYNC_DIRECTORIES=1`` always fsyncs directories.

:func:`syncfs` flushes a whole filesystem at once (Linux): what a large batch of unflushed
writes is made durable with. :func:`start_writeback` asks Linux to begin writing a stretch
of a file to disk without waiting: a large file written in pieces and fsynced at the end
then finds most of its bytes already on disk, so the fsync, which the writer waits for, is
short (the same idea as RocksDB's ``bytes_per_sync``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

#: Filesystems whose fsync of a new file also makes its directory entry durable.
ENTRY_WITH_FILE = frozenset({"ext4", "xfs", "btrfs"})
_lock = threading.Lock()
_by_device: dict[int, bool] = {}
_SYNCFS: list[Callable[[int], int] | None] = []  # libc's syncfs, loaded on first use
_SYNC_FILE_RANGE: list[Callable[[int, int, int, int], int] | None] = []  # likewise
#: ``SYNC_FILE_RANGE_WRITE`` of Linux's ``sync_file_range``: start writing dirty pages out.
_RANGE_WRITE = 2


def fsync_covers_new_entry(st_dev: int) -> bool:
    """Whether an fsync of a file newly created on device ``st_dev`` (``os.stat().st_dev``)
    also makes its directory entry durable (see the module docstring)."""
    known = _by_device.get(st_dev)
    if known is None:
        known = _filesystem_type(st_dev) in ENTRY_WITH_FILE and not os.environ.get(
            "GRAVELER_FSYNC_DIRECTORIES"
        )
        with _lock:
            _by_device[st_dev] = known
    return known


def _filesystem_type(st_dev: int) -> str | None:
    """The type of the filesystem mounted from device ``st_dev`` (Linux's mountinfo), or
    None when it cannot be told."""
    if not sys.platform.startswith("linux"):
        return None
    device = f"{os.major(st_dev)}:{os.minor(st_dev)}"
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                fields = line.split(" - ", 1)
                head = fields[0].split()
                if len(fields) == 2 and len(head) > 2 and head[2] == device:
                    return fields[1].split()[0]
    except OSError:
        return None
    return None


def _syncfs_call() -> Callable[[int], int] | None:
    """libc's ``syncfs`` (Linux), or None where there is none."""
    if not _SYNCFS:
        import ctypes

        try:
            fn = ctypes.CDLL(None, use_errno=True).syncfs
            fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
            _SYNCFS.append(fn)
        except (OSError, AttributeError):
            _SYNCFS.append(None)
    return _SYNCFS[0]


def syncfs(path: str) -> bool:
    """Flush every pending write of the filesystem holding ``path`` (data, inodes and
    directory entries) with Linux's ``syncfs``; False where it is unavailable. Raises
    OSError when the kernel reports a write-back error on that filesystem that nobody has
    seen yet (Linux 5.8+), so a failed write of a batch is not taken for durable."""
    call = _syncfs_call()
    if call is None:
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        if call(fd) != 0:
            import ctypes

            errno = ctypes.get_errno()
            raise OSError(errno, f"syncfs failed: {os.strerror(errno)}", path)
    finally:
        os.close(fd)
    return True


def _sync_file_range_call() -> Callable[[int, int, int, int], int] | None:
    """libc's ``sync_file_range`` (Linux), or None where there is none."""
    if not _SYNC_FILE_RANGE:
        import ctypes

        try:
            fn = ctypes.CDLL(None, use_errno=True).sync_file_range
            fn.argtypes = [ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_uint]
            fn.restype = ctypes.c_int
            _SYNC_FILE_RANGE.append(fn if sys.platform.startswith("linux") else None)
        except (OSError, AttributeError):
            _SYNC_FILE_RANGE.append(None)
    return _SYNC_FILE_RANGE[0]


def start_writeback(fd: int, offset: int, length: int) -> bool:
    """Start writing ``length`` bytes of the open file ``fd`` from ``offset`` to disk, without
    waiting for them (see the module docstring); whether the kernel took the hint. A hint
    only: it makes nothing durable (the writer's fsync still does), and where it is
    unavailable or refused nothing happens."""
    call = _sync_file_range_call()
    return call is not None and call(fd, offset, length, _RANGE_WRITE) == 0
