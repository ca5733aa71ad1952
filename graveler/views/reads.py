"""Reading objects at a ref: stat, bytes, streams and listings.

A plain branch name reads through its staged changes (current token, then sealed tokens newest
first, then the committed tree); any other ref reads its commit's tree alone. Object bytes are
verified against the recorded size and SHA-256 as they are read.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import replace
from functools import partial
from typing import BinaryIO

from graveler.core import validate
from graveler.core.background import in_background
from graveler.core.errors import ObjectNotFound
from graveler.storage.committed.record import ValueRecord
from graveler.storage.entry import ObjectEntry
from graveler.storage.objects import check_bytes, full_address, open_verified, read_verified
from graveler.storage.objectstore.port import ObjectStore
from graveler.views.context import RepoContext
from graveler.views.layers import combined_records
from graveler.views.listing import ListingPage, iter_entries, list_entries


def stat(repo: RepoContext, ref: str, path: str) -> ObjectEntry:
    """The entry at ``path``; raises ObjectNotFound when there is none at ``ref`` (InvalidKey
    when ``path`` is not a valid object path)."""
    key = validate.lookup_key(path)
    cache = repo.read_cache
    view = cache.view(repo, ref)
    staged = view.staged
    if staged is not None and not staged.clean:
        found = staged.lookup(key)
        if found is not None:
            if found.value is None:
                raise ObjectNotFound(f"{path!r} is deleted on branch {ref!r}")
            return cache.entry((key, found.identity, found.value))
    rec = view.get(key)
    if rec is None:
        validate.object_key(path)
        raise ObjectNotFound(f"no object {path!r} at {ref!r} in {repo.name!r}")
    return cache.entry(rec)


def exists(repo: RepoContext, ref: str, path: str) -> bool:
    """Whether there is an object at ``path`` at ``ref`` (InvalidKey when ``path`` is not a
    valid object path)."""
    key = validate.lookup_key(path)
    view = repo.read_cache.view(repo, ref)
    staged = view.staged
    if staged is not None and not staged.clean:
        found = staged.lookup(key)
        if found is not None:
            return found.value is not None
    if view.get(key) is not None:
        return True
    validate.object_key(path)
    return False


def stat_many(repo: RepoContext, ref: str, paths: Sequence[str]) -> list[ObjectEntry | None]:
    """Entries for many paths at once (None where absent), aligned with ``paths``.
    Committed lookups are batched; a branch's staged changes are consulted per path.
    Raises InvalidKey when a path is not a valid object path."""
    keys = validate.lookup_keys(paths)
    cache = repo.read_cache
    view = cache.view(repo, ref)
    out = cache.committed_entries(repo.committed, view.commit.metarange_id, keys)
    staged = view.staged
    if staged is not None and not staged.clean:
        for i, key in enumerate(keys):
            found = staged.lookup(key)
            if found is not None:
                value = found.value
                out[i] = None if value is None else cache.entry((key, found.identity, value))
    if not all(out):  # (entries are truthy) a path that cannot exist is an error, not absent
        for i in [i for i, e in enumerate(out) if e is None]:
            validate.object_key(paths[i])
    return out


def open_object(repo: RepoContext, ref: str, path: str) -> BinaryIO:
    """A streaming reader of the object's bytes. Reading it to the end verifies size and
    SHA-256 and raises CorruptFile on a mismatch (not after a seek)."""
    return open_entry(repo, stat(repo, ref, path))


def get(repo: RepoContext, ref: str, path: str) -> bytes:
    """The object's bytes; CorruptFile when they are not the recorded size and SHA-256."""
    return read_entry(repo, stat(repo, ref, path))


def read_entry(repo: RepoContext, entry: ObjectEntry) -> bytes:
    """The bytes of an entry already looked up (by :func:`stat` or a listing), verified:
    CorruptFile when they are not the recorded size and SHA-256."""
    return read_verified(*_located(repo, entry))


class EarlyRead:
    """An entry's bytes, read in a background thread and usable before their check ends:
    a caller parses them (:meth:`unchecked`) while their SHA-256 is computed, and waits for
    :meth:`checked` before acting on anything they say. See :func:`early_reads`.

    The check is made once, by whichever thread comes to it first: the background thread
    (after the read, one check at a time across the batch), or the caller in :meth:`checked`
    when it finds the check not started yet (it is then done parsing and has a core free)."""

    def __init__(self, repo: RepoContext, entry: ObjectEntry, one_check: threading.Lock) -> None:
        self._bytes: Future[bytes] = Future()
        self._check: Future[None] = Future()
        self._store, self._entry = _located(repo, entry)
        self._unclaimed = threading.Lock()  # taken, never released, by the one checker
        in_background(self._run, one_check)

    def unchecked(self) -> bytes:
        """The bytes as stored (the read's error, if it failed)."""
        return self._bytes.result()

    def checked(self) -> bytes:
        """The bytes, once they are known to be the recorded ones (CorruptFile otherwise)."""
        self._check_once()
        self._check.result()
        return self._bytes.result()

    def _run(self, one_check: threading.Lock) -> None:
        try:
            self._bytes.set_result(self._store.get(self._entry.physical_address))
        except BaseException as exc:
            self._bytes.set_exception(exc)
            self._check_once()  # it fails with the read's error: nothing to hash
            return
        with one_check:
            self._check_once()

    def _check_once(self) -> None:
        """Make the check unless another thread has started it (which then finishes it)."""
        if not self._unclaimed.acquire(blocking=False):
            return
        try:
            check_bytes(self._bytes.result(), self._entry)
        except BaseException as exc:
            self._check.set_exception(exc)
        else:
            self._check.set_result(None)


def early_reads(repo: RepoContext, entries: Sequence[ObjectEntry]) -> list[EarlyRead]:
    """:class:`EarlyRead` of each entry: all are read at once (a remote store's latency is
    paid once), then checked one at a time, so that the checks take one core beside the
    caller's rather than every core (hashing releases the GIL)."""
    one_check = threading.Lock()
    return [EarlyRead(repo, entry, one_check) for entry in entries]


def open_entry(repo: RepoContext, entry: ObjectEntry) -> BinaryIO:
    """A verifying stream over the bytes of an entry already looked up."""
    return open_verified(*_located(repo, entry))


def open_unverified(repo: RepoContext, entry: ObjectEntry) -> BinaryIO:
    """The stored bytes of an entry as they are, for a caller that checks their size and
    SHA-256 itself (the S3 gateway hashes while it sends)."""
    store, located = _located(repo, entry)
    return store.open(located.physical_address)


def physical_uri(repo: RepoContext, entry: ObjectEntry) -> str:
    """The full URI of ``entry``'s bytes: inside the repository's namespace, or the external
    address of an imported object."""
    if entry.external:
        return entry.physical_address
    return full_address(repo.info.storage_namespace, entry.physical_address)


def _located(repo: RepoContext, entry: ObjectEntry) -> tuple[ObjectStore, ObjectEntry]:
    """The store holding ``entry``'s bytes, and the entry with its key in that store."""
    if not entry.external:
        return repo.store, entry
    store, key = repo.external.locate(entry.physical_address)
    return store, replace(entry, physical_address=key)


def iter_objects(
    repo: RepoContext, ref: str, prefix: str = "", after: str = ""
) -> Iterator[ObjectEntry]:
    """Every object under ``prefix`` (recursive), in path order."""
    return iter_entries(partial(records, repo, ref), prefix, after)


def list_objects(
    repo: RepoContext,
    ref: str,
    prefix: str = "",
    *,
    delimiter: str | None = "/",
    after: str = "",
    amount: int = 1000,
) -> ListingPage:
    """One page of objects and common prefixes under ``prefix``."""
    return list_entries(partial(records, repo, ref), prefix, delimiter, after, amount)


def records(repo: RepoContext, ref: str, prefix: bytes, after: bytes) -> Iterator[ValueRecord]:
    """The records a reader of ``ref`` sees under ``prefix``, with keys greater than ``after``."""
    view = repo.read_cache.view(repo, ref)
    start = after + b"\x00" if after else b""
    committed = repo.committed.iterate(view.commit.metarange_id, start, prefix)
    if view.staged is None or view.staged.clean:
        return committed
    return combined_records(view.staged.iter_staged(start, prefix), committed)
