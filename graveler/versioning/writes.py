"""Writing objects on a branch: upload, link existing bytes, stage and delete.

Bytes are written to a fresh physical address in the namespace first, then the entry is staged
on the branch in one transaction: a crash between the two leaves an unreferenced object (which
garbage collection removes), never an entry without bytes. Protected branches refuse writes.
"""

from __future__ import annotations

import contextlib
import functools
import mimetypes
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import BinaryIO, TypedDict, Unpack

from graveler.core import validate
from graveler.core.errors import InvalidArgument, ObjectNotFound, PreconditionFailed
from graveler.core.model import StagedEntry
from graveler.storage import entry as entries
from graveler.storage.entry import ObjectEntry
from graveler.storage.etag_hash import EtagHasher
from graveler.storage.objects import (
    checked_entry,
    new_physical_address,
    normalize_address,
)
from graveler.storage.objectstore import stored_sha256
from graveler.storage.objectstore._io import iter_chunks
from graveler.views.context import RepoContext
from graveler.views.reads import stat


class EntryAttributes(TypedDict, total=False):
    """Optional attributes of a linked object (computed or defaulted when absent or None)."""

    checksum: str | None
    size: int | None
    content_type: str | None
    metadata: Mapping[str, str] | None
    mtime: datetime | None


def put(
    repo: RepoContext,
    branch: str,
    path: str,
    data: bytes | BinaryIO,
    *,
    content_type: str | None = None,
    metadata: Mapping[str, str] | None = None,
    condition: Condition | None = None,
    verify: Callable[[ObjectEntry], object] | None = None,
) -> ObjectEntry:
    """Stream ``data`` to a new physical address and stage it at ``path``: the bytes are
    durable before the one staging transaction (which also checks that the branch exists and
    is not protected; refused bytes are removed again).

    ``condition`` makes the write conditional: it is called inside the staging transaction
    with the entry at ``path`` on the branch as it is then (None when there is none) and
    refuses the write by raising (PreconditionFailed): of concurrent conditional writers
    each sees what those before it wrote (put-if-absent: exactly one wins). ``verify`` is
    called with the stored entry before staging (a digest the sender declared, say): what
    it raises deletes the bytes and stages nothing."""
    validate.written_key(path)
    meta = validate.metadata(metadata)
    entry = store_object(repo, path, data, content_type=content_type, metadata=meta)
    if verify is not None:
        try:
            verify(entry)
        except BaseException:
            delete_stored(repo, [entry])
            raise
    stage_stored(repo, branch, [entry], check=condition_check(repo, branch, path, condition))
    return entry


#: A conditional write's test of the entry currently at the path (None: no object there).
Condition = Callable[[ObjectEntry | None], object]


def if_absent(current: ObjectEntry | None) -> None:
    """The put-if-absent condition (S3's ``If-None-Match: *``)."""
    if current is not None:
        raise PreconditionFailed(f"an object already exists at {current.path!r}")


def condition_check(
    repo: RepoContext, branch: str, path: str, condition: Condition | None
) -> Callable[[], None] | None:
    """``condition`` as :func:`stage_stored`'s ``check`` of the entry at ``path`` (None for
    no condition)."""
    return None if condition is None else functools.partial(_check, repo, branch, path, condition)


def _check(repo: RepoContext, branch: str, path: str, condition: Condition) -> None:
    try:
        current: ObjectEntry | None = stat(repo, branch, path)
    except ObjectNotFound:
        current = None
    condition(current)


def store_object(
    repo: RepoContext,
    path: str,
    data: bytes | BinaryIO,
    *,
    content_type: str | None = None,
    metadata: Mapping[str, str] | None = None,
    durable: bool = True,
) -> ObjectEntry:
    """Write ``data`` to a new physical address, hashing it on the way (SHA-256 for the
    checksum, MD5 for the S3 ETag); the entry that describes it (not staged). Durable on
    return, unless ``durable`` is False: then ``repo.store.sync`` of its address must come
    before it is staged."""
    address = new_physical_address()
    md5 = EtagHasher()
    try:
        with repo.store.open_writer(address, fresh=True, durable=durable) as writer:
            for chunk in iter_chunks(data):
                md5.update(chunk)
                writer.write(chunk)
        info = writer.commit()
        etag = md5.hexdigest()
    finally:
        md5.close()
    return ObjectEntry(
        path=path,
        physical_address=address,
        size=info.size,
        checksum=writer.sha256(),
        mtime=info.mtime,
        content_type=content_type or guess_type(path),
        metadata=dict(metadata or {}),
        etag=etag,
    )


def stage_stored(
    repo: RepoContext,
    branch: str,
    stored: Sequence[ObjectEntry],
    *,
    before_commit: Callable[[], object] | None = None,
    check: Callable[[], object] | None = None,
) -> None:
    """Stage entries whose bytes were just written; when staging fails (branch missing or
    protected, database down, ``check`` refused) the bytes are deleted again, best effort,
    and the error propagates. ``before_commit`` runs inside the staging transaction once
    every entry is written to it, before it commits, ``check`` before anything is written
    (see StagingStore.stage): what either raises rolls the transaction back."""
    entries = [e.to_staged() for e in stored]
    try:
        repo.staging.stage(repo.name, branch, entries, before_commit=before_commit, check=check)
    except BaseException:
        delete_stored(repo, stored)
        raise


def delete_stored(repo: RepoContext, stored: Iterable[ObjectEntry]) -> None:
    """Delete the bytes of entries that were never staged, best effort: a failed delete leaves
    an unreferenced object (garbage collection removes it) and must not hide the error that
    led here."""
    for entry in stored:
        with contextlib.suppress(Exception):
            repo.store.delete(entry.physical_address)


def link(
    repo: RepoContext,
    branch: str,
    path: str,
    physical_address: str,
    **attrs: Unpack[EntryAttributes],
) -> ObjectEntry:
    """Stage an object that already exists inside the namespace (no copy)."""
    entry = make_linked_entry(repo, path, physical_address, **attrs)
    stage_entries(repo, branch, [entry])
    return entry


def make_linked_entry(
    repo: RepoContext, path: str, physical_address: str, **attrs: Unpack[EntryAttributes]
) -> ObjectEntry:
    """The entry for an existing object inside the namespace. Size, mtime and checksum are
    read from the store when not given (the checksum by streaming the object once); a
    writer that just stored the object passes all three and the store is not asked."""
    checksum, size, mtime = attrs.get("checksum"), attrs.get("size"), attrs.get("mtime")
    validate.written_key(path)
    address = normalize_address(repo.info.storage_namespace, physical_address)
    if size is None or mtime is None:
        info = repo.store.stat(address)
        size = info.size if size is None else size
        mtime = info.mtime if mtime is None else mtime
    if checksum is None:
        checksum = stored_sha256(repo.store, address)
    return ObjectEntry(
        path=path,
        physical_address=address,
        size=size,
        checksum=checksum,
        mtime=mtime,
        content_type=attrs.get("content_type") or guess_type(path),
        metadata=validate.metadata(attrs.get("metadata")),
    )


def stage_entries(
    repo: RepoContext, branch: str, items: Iterable[ObjectEntry], *, delete: Iterable[str] = ()
) -> int:
    """Stage many entries in one transaction; returns how many. Paths in ``delete`` are
    removed in the same transaction (an entry in ``items`` at such a path wins). Physical
    addresses are checked as ``link`` checks them (InvalidArgument). Raises BranchNotFound or
    ProtectedBranch; nothing is staged on any error."""
    count = 0

    def staged() -> Iterator[StagedEntry]:
        nonlocal count
        for path in delete:
            yield StagedEntry(validate.object_key(path), None, None)
        for e in items:
            validate.written_key(e.path)
            if e.external:
                raise InvalidArgument(
                    f"entry {e.path!r} has an external address; only import creates those"
                )
            count += 1
            yield checked_entry(repo.info.storage_namespace, e).to_staged()

    repo.staging.stage(repo.name, branch, staged())
    return count


def delete(repo: RepoContext, branch: str, path: str) -> None:
    """Stage the removal of ``path``; raises ObjectNotFound when it is not there."""
    stat(repo, branch, path)
    repo.staging.stage(repo.name, branch, [StagedEntry(validate.object_key(path), None, None)])


def delete_many(repo: RepoContext, branch: str, paths: Iterable[str]) -> int:
    """Stage the removal of every path (absent ones included); returns how many."""
    keys = [StagedEntry(validate.object_key(p), None, None) for p in paths]
    repo.staging.stage(repo.name, branch, keys)
    return len(keys)


def guess_type(path: str) -> str:
    """The content type of ``path`` by its extension, or the default one."""
    name = path[path.rfind("/") + 1 :]
    last = name.rfind(".")
    if last <= 0:  # no suffix (a leading dot is none either)
        return entries.DEFAULT_CONTENT_TYPE
    before = name.rfind(".", 0, last)
    return _type_of_suffixes("x" + name[before if before > 0 else last :])


@functools.lru_cache(maxsize=1024)
def _type_of_suffixes(name: str) -> str:
    """``mimetypes`` looks at a name's last two suffixes only: cached by them."""
    return mimetypes.guess_type(name)[0] or entries.DEFAULT_CONTENT_TYPE
