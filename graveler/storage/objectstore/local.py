"""An object store over a local directory (``file:///abs/path``).

A key ``a/b/c`` is the file ``<root>/a/b/c``. Writes go to a temporary file in the target's
directory, are fsynced, then renamed over the target with :func:`os.replace` (atomic on POSIX)
and the directory is fsynced, so a reader sees the old or the complete new object and a crash
never leaves a torn one. Temporary files are named ``.graveler-tmp-*``; :meth:`list` skips
them and keys with a component starting with that prefix are refused.

Safety: every key is validated (:func:`~graveler.storage.objectstore.keys.validate_key`) and its
path is resolved (following symlinks) and checked to lie under the resolved root, so neither ``..``
nor a symlink planted inside the root can make the store read or write outside it.

A directory cannot be both a file and a directory, so unlike S3 this store cannot hold both
``a`` and ``a/b``; such a ``put`` raises :class:`StorageError`. Empty directories left behind by
``delete`` are not pruned (they hold no objects and :meth:`list` ignores them).
"""

from __future__ import annotations

import builtins
import os
import stat as stat_mod
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import BinaryIO
from urllib.parse import quote

from graveler.core.errors import InvalidArgument, InvalidKey, ObjectNotFound, StorageError
from graveler.storage.objectstore._io import check_range, from_timestamp, iter_chunks
from graveler.storage.objectstore.durability import fsync_covers_new_entry
from graveler.storage.objectstore.keys import validate_key, validate_prefix
from graveler.storage.objectstore.local_writer import (
    TMP_PREFIX,
    LocalObjectWriter,
    fsync_directory,
    make_directories,
    sync_files,
    unlink_quietly,
    write_new_file,
)
from graveler.storage.objectstore.port import ObjectInfo

#: Directories whose resolution a store remembers (by identity) at most.
CHECKED_DIRS_MAX = 4096

__all__ = ["TMP_PREFIX", "LocalObjectStore"]

_MISSING = (FileNotFoundError, NotADirectoryError, IsADirectoryError)


class LocalObjectStore:
    """Objects as files under ``root`` (an absolute directory, created on first write)."""

    def __init__(self, root: str) -> None:
        if not isinstance(root, str) or not os.path.isabs(root):
            raise InvalidArgument(f"local object store root must be an absolute path: {root!r}")
        self._root = os.path.realpath(root)
        self._lock = threading.Lock()
        self._checked_dirs: dict[str, tuple[int, int]] = {}  # resolved inside the root
        self._made_dirs: set[str] = set()  # directories known to exist (put_fresh_batch)
        self._unsynced_dirs: set[str] = set()  # holding entries of new dirs, not yet fsynced
        self._unflushed: set[str] = set()  # keys of new files written without an fsync
        self._root_device: int | None = None

    def __repr__(self) -> str:
        return f"LocalObjectStore({self._root!r})"

    @property
    def root(self) -> str:
        """The resolved absolute root directory."""
        return self._root

    @property
    def uri(self) -> str:
        """``file://`` + the percent-encoded root path."""
        return "file://" + quote(self._root)

    # --- paths ---------------------------------------------------------------------------------

    def _within_root(self, real_path: str) -> bool:
        return real_path == self._root or real_path.startswith(self._root.rstrip(os.sep) + os.sep)

    def _path(self, key: str) -> str:
        """The file path of a valid key; InvalidKey if the key is bad or resolves outside root.
        The common case costs two system calls: a directory already resolved inside the root
        is recognised by its identity (as in :meth:`_fresh_path`), and a last component that
        is not a symbolic link needs no resolving; anything else is resolved in full."""
        path = self._joined(key)
        if self._known_directory(os.path.dirname(path)):
            try:
                if not stat_mod.S_ISLNK(os.lstat(path).st_mode):
                    return path
            except OSError:
                return path  # missing: the caller's own call reports it
        if not self._within_root(os.path.realpath(path)):
            raise _escapes(key, self._root)
        return path

    def _known_directory(self, directory: str) -> bool:
        """Whether ``directory`` resolves inside the root, by its identity when it was
        resolved before (a component swapped for a link since resolves elsewhere, so it is
        resolved again); False when it does not exist or lies outside."""
        try:
            st = os.stat(directory)
        except OSError:
            return False
        identity = (st.st_dev, st.st_ino)
        if self._checked_dirs.get(directory) == identity:
            return True
        if not self._within_root(os.path.realpath(directory)):
            return False
        if len(self._checked_dirs) >= CHECKED_DIRS_MAX:
            self._checked_dirs.clear()
        self._checked_dirs[directory] = identity
        return True

    def _fresh_path(self, key: str, this_call: set[str] | None = None) -> str:
        """The file path of a key to create exclusively (``O_EXCL`` refuses a symbolic link as
        the last component): its directory must resolve inside the root
        (:meth:`_known_directory`, one ``stat`` once checked)."""
        path = self._joined(key)
        directory = os.path.dirname(path)
        if this_call is not None:  # checked once per batch call and directory
            if directory in this_call:
                return path
            this_call.add(directory)
        # A directory not there yet is made inside the root (below): resolve what exists.
        if not self._known_directory(directory) and not self._within_root(
            os.path.realpath(directory)
        ):
            raise _escapes(key, self._root)
        return path

    def _joined(self, key: str) -> str:
        validate_key(key)
        parts = key.split("/")
        if any(part.startswith(TMP_PREFIX) for part in parts):
            raise InvalidKey(f"object key {key!r} uses the reserved name prefix {TMP_PREFIX!r}")
        return os.path.join(self._root, *parts)

    def _error(self, action: str, key: str, exc: OSError) -> StorageError:
        return StorageError(
            f"{action} object {key!r} in {self.uri} failed: {exc}; check that the directory "
            "exists and is writable, the disk has free space, and no object is also used as a "
            "directory (a local store cannot hold both 'a' and 'a/b')"
        )

    # --- writing -------------------------------------------------------------------------------

    def put(self, key: str, data: bytes | BinaryIO) -> ObjectInfo:
        """Atomically create or replace ``key``: temp file + fsync + os.replace + dir fsync.

        A file-like ``data`` is copied in 1 MiB chunks. If reading it raises, the exception
        propagates unchanged, the temporary file is removed and the old object is untouched.
        """
        with self.open_writer(key) as writer:
            for chunk in iter_chunks(data):
                writer.write(chunk)
        return writer.commit()

    def open_writer(
        self, key: str, *, fresh: bool = False, durable: bool = True
    ) -> LocalObjectWriter:
        """A writer of ``key`` (see :mod:`graveler.storage.objectstore.local_writer`). With
        ``fresh`` the file is written in place and must not exist yet (StorageError if it does);
        with ``durable=False`` its flushing (and that of any directory created for it) is left for
        :meth:`sync`."""
        path = self._fresh_path(key) if fresh else self._path(key)
        error = partial(self._error, "writing", key)
        try:
            self._ensure_directory(os.path.dirname(path), durable=durable)
        except OSError as exc:
            raise error(exc) from exc
        return self._writer(key, path, fresh, durable, error)

    def _writer(
        self,
        key: str,
        path: str,
        fresh: bool,
        durable: bool,
        error: Callable[[OSError], StorageError],
    ) -> LocalObjectWriter:
        return LocalObjectWriter(
            key, path, fresh=fresh, durable=durable, error=error, unflushed=self._unflushed.add
        )

    def put_fresh_batch(self, items: Sequence[tuple[str, bytes]]) -> builtins.list[ObjectInfo]:
        """Create each new, unique key of ``items`` with its bytes, as writers opened with
        ``fresh=True, durable=False`` would (durable once :meth:`sync` ran for them), in one
        call: for many small objects the cost is then mostly the system calls. An optional
        extension of the ObjectStore port (``graveler.versioning.bulk_writes`` uses it where
        present). Raises InvalidKey or StorageError after removing the files this call created."""
        created: builtins.list[str] = []
        infos: builtins.list[ObjectInfo] = []
        key = ""
        checked: set[str] = set()
        try:
            for key, data in items:
                path = self._fresh_path(key, checked)
                mtime = write_new_file(path, data, self._directory_for)
                created.append(path)
                infos.append(ObjectInfo(key, len(data), from_timestamp(mtime)))
                self._unflushed.add(key)
        except BaseException as exc:
            for path in created:
                unlink_quietly(path)
            self._unflushed.difference_update(info.key for info in infos)
            if isinstance(exc, OSError):
                raise self._error("writing", key, exc) from exc
            raise
        return infos

    def _directory_for(self, path: str, missing: bool) -> None:
        """Make sure the directory of a new file exists (``missing``: it vanished since it
        was made), leaving its flushing to :meth:`sync`."""
        directory = os.path.dirname(path)
        if missing:
            self._made_dirs.discard(directory)
        if directory not in self._made_dirs:
            self._ensure_directory(directory, durable=False)

    def sync(self, keys: Iterable[str]) -> None:
        """Make durable the objects that writers opened with ``durable=False`` committed under
        ``keys``, and the directories created for them: one ``syncfs`` for a large batch on
        Linux, otherwise an fsync of each file not flushed yet (fresh ones) and of each
        directory involved (see :func:`~graveler.storage.objectstore.local_writer.sync_files`). The
        directory of a fresh file needs none where the file's fsync also commits its entry
        (:func:`~graveler.storage.objectstore.durability.fsync_covers_new_entry`). Raises
        StorageError."""
        batch = list(keys)
        with self._lock:
            parents = list(self._unsynced_dirs)
            unflushed = [key for key in batch if key in self._unflushed]

        def plan() -> tuple[builtins.list[str], set[str]]:
            paths = {key: self._path(key) for key in batch}
            fresh = set(unflushed) if self._entries_follow_files() else set()
            folders = {os.path.dirname(paths[key]) for key in batch if key not in fresh}
            return [paths[key] for key in unflushed], folders.union(parents)

        try:
            sync_files(self._root, len(batch), plan)
        except OSError as exc:
            raise StorageError(
                f"making {len(batch)} object(s) durable in {self.uri} failed: {exc}"
            ) from exc
        with self._lock:  # only once they are on disk
            self._unsynced_dirs.difference_update(parents)
            self._unflushed.difference_update(unflushed)

    def _entries_follow_files(self) -> bool:
        """Whether an fsync of a new file under the root commits its directory entry too."""
        if self._root_device is None:
            try:
                self._root_device = os.stat(self._root).st_dev
            except OSError:
                return False
        return fsync_covers_new_entry(self._root_device)

    def put_if_absent(self, key: str, data: bytes) -> bool:
        """Create ``key`` unless a file is there: a complete, fsynced temp file is hard-linked
        to the key's path (``link`` fails atomically when the path exists), so a reader never
        sees a partial object and of racing writers exactly one wins."""
        path = self._path(key)
        error = partial(self._error, "creating", key)
        try:
            self._ensure_directory(os.path.dirname(path))
        except OSError as exc:
            raise error(exc) from exc
        writer = LocalObjectWriter(key, path, fresh=False, exclusive=True, error=error)
        writer.write(data)
        try:
            writer.commit()
        except FileExistsError:
            return False
        return True

    def _ensure_directory(self, directory: str, *, durable: bool = True) -> None:
        """Create ``directory`` and its missing parents, fsyncing each new entry's parent (or,
        when not ``durable``, leaving those parents for :meth:`sync`)."""
        parents = make_directories(directory)
        self._made_dirs.add(directory)
        if not durable:
            if parents:
                with self._lock:
                    self._unsynced_dirs.update(parents)
            return
        if self._unsynced_dirs:  # a durable object needs every directory above it on disk
            with self._lock:
                parents.extend(self._unsynced_dirs)
        for parent in parents:
            fsync_directory(parent)
        if parents:
            with self._lock:
                self._unsynced_dirs.difference_update(parents)

    def delete(self, key: str) -> None:
        """Remove ``key``; a missing key (or a directory at its path) is fine."""
        path = self._path(key)
        self._unflushed.discard(key)
        if os.path.isdir(path):
            return
        try:
            os.unlink(path)
        except _MISSING:
            return
        except OSError as exc:
            raise self._error("deleting", key, exc) from exc

    # --- reading -------------------------------------------------------------------------------

    def open(self, key: str) -> BinaryIO:
        """The object's file, opened for binary reading; ObjectNotFound if missing."""
        path = self._path(key)
        try:
            return builtins.open(path, "rb")
        except _MISSING as exc:
            raise ObjectNotFound(f"no object {key!r} in {self.uri}") from exc
        except OSError as exc:
            raise self._error("opening", key, exc) from exc

    def get(self, key: str) -> bytes:
        """The whole object; ObjectNotFound if missing."""
        with self.open(key) as f:
            try:
                return f.read()
            except OSError as exc:
                raise self._error("reading", key, exc) from exc

    def read_range(self, key: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset``; empty past the end; ObjectNotFound if missing."""
        check_range(offset, length)
        with self.open(key) as f:
            try:
                f.seek(offset)
                return f.read(length)
            except OSError as exc:
                raise self._error("reading", key, exc) from exc

    def stat(self, key: str) -> ObjectInfo:
        """Size and mtime (UTC) of ``key``; ObjectNotFound if missing or a directory."""
        path = self._path(key)
        try:
            st = os.stat(path)
        except _MISSING as exc:
            raise ObjectNotFound(f"no object {key!r} in {self.uri}") from exc
        except OSError as exc:
            raise self._error("inspecting", key, exc) from exc
        if not stat_mod.S_ISREG(st.st_mode):
            raise ObjectNotFound(f"no object {key!r} in {self.uri} (it is a directory)")
        return ObjectInfo(key, st.st_size, from_timestamp(st.st_mtime))

    def exists(self, key: str) -> bool:
        """True if ``key`` is a regular file in the store."""
        return os.path.isfile(self._path(key))

    def local_path(self, key: str) -> str | None:
        """The file path of ``key`` (whether or not it exists yet)."""
        return self._path(key)

    # --- listing -------------------------------------------------------------------------------

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """Objects whose key starts with ``prefix``, sorted by key, recursively.

        Temporary files, symbolic links to directories and links resolving outside the root
        are skipped. Only directories that can hold matching keys are entered.
        """
        validate_prefix(prefix)
        return self._walk(self._root, "", prefix)

    def _walk(self, directory: str, key_prefix: str, prefix: str) -> Iterator[ObjectInfo]:
        for sort_key, entry in self._sorted_entries(directory, key_prefix):
            if sort_key.endswith("/"):
                if sort_key.startswith(prefix) or prefix.startswith(sort_key):
                    yield from self._walk(entry.path, sort_key, prefix)
            elif sort_key.startswith(prefix):
                info = self._entry_info(sort_key, entry)
                if info is not None:
                    yield info

    def _sorted_entries(
        self, directory: str, key_prefix: str
    ) -> builtins.list[tuple[str, os.DirEntry[str]]]:
        """Entries of ``directory`` keyed so that sorting them sorts the full keys.

        A directory ``d`` sorts as ``d/``: every key below it starts with ``d/``, so this puts
        ``a-c`` (``-`` < ``/``) before the keys of directory ``a``, exactly as a flat sort would.
        """
        try:
            with os.scandir(directory) as it:
                entries = builtins.list(it)
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise StorageError(f"listing {directory} in {self.uri} failed: {exc}") from exc
        keyed: builtins.list[tuple[str, os.DirEntry[str]]] = []
        for entry in entries:
            if entry.name.startswith(TMP_PREFIX):
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            keyed.append((key_prefix + entry.name + ("/" if is_dir else ""), entry))
        keyed.sort(key=lambda item: item[0])
        return keyed

    def _entry_info(self, key: str, entry: os.DirEntry[str]) -> ObjectInfo | None:
        """ObjectInfo of a listed file, or None if it is not a servable object."""
        try:
            if entry.is_symlink() and not self._within_root(os.path.realpath(entry.path)):
                return None
            if not entry.is_file():
                return None
            validate_key(key)
            st = entry.stat()
        except (InvalidKey, FileNotFoundError):
            return None
        except OSError as exc:
            raise StorageError(f"listing {key!r} in {self.uri} failed: {exc}") from exc
        return ObjectInfo(key, st.st_size, from_timestamp(st.st_mtime))


def _escapes(key: str, root: str) -> InvalidKey:
    return InvalidKey(
        f"object key {key!r} resolves outside the store root {root} "
        "(through a symbolic link); refusing to follow it"
    )
