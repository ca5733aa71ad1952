"""Writing objects on a branch: upload, link existing bytes, stage and delete.

Bytes are written to a fresh physical address in the namespace first, then the entry is staged
on the branch in one transaction: a crash between the two leaves an unreferenced object (which
garbage collection removes), never an entry without bytes. Protected branches refuse writes.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import BinaryIO, TypedDict, Unpack

from graveler import entry as entries
from graveler import validate
from graveler.context import RepoContext
from graveler.entry import ObjectEntry
from graveler.errors import InvalidArgument, ProtectedBranch
from graveler.model import Branch, StagedEntry
from graveler.objects import HashingReader, new_physical_address, normalize_address
from graveler.reads import stat


class EntryAttributes(TypedDict, total=False):
    """Optional attributes of a linked object (computed or defaulted when absent or None)."""

    checksum: str | None
    size: int | None
    content_type: str | None
    metadata: Mapping[str, str] | None
    mtime: datetime | None


def writable(repo: RepoContext, branch: str) -> Branch:
    """The branch row; raises BranchNotFound, or ProtectedBranch when it refuses writes."""
    b = repo.refs.get_branch(repo.name, branch)
    if b.protected:
        raise ProtectedBranch(
            f"branch {branch!r} is protected: write to another branch and merge into it"
        )
    return b


def put(
    repo: RepoContext,
    branch: str,
    path: str,
    data: bytes | BinaryIO,
    *,
    content_type: str | None = None,
    metadata: Mapping[str, str] | None = None,
) -> ObjectEntry:
    """Stream ``data`` to a new physical address and stage it at ``path``."""
    validate.object_key(path)
    meta = validate.metadata(metadata)
    writable(repo, branch)
    address = new_physical_address()
    reader = HashingReader(data)
    info = repo.store.put(address, reader)  # type: ignore[arg-type]
    entry = ObjectEntry(
        path=path,
        physical_address=address,
        size=reader.size,
        checksum=reader.hexdigest(),
        mtime=info.mtime,
        content_type=content_type or guess_type(path),
        metadata=meta,
    )
    repo.staging.stage(repo.name, branch, [entry.to_staged()])
    return entry


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
    validate.object_key(path)
    address = normalize_address(repo.info.storage_namespace, physical_address)
    if size is None or mtime is None:
        info = repo.store.stat(address)
        size = info.size if size is None else size
        mtime = info.mtime if mtime is None else mtime
    if checksum is None:
        with repo.store.open(address) as fh:
            reader = HashingReader(fh)
            while reader.read(1 << 20):
                pass
        checksum = reader.hexdigest()
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
    removed in the same transaction (an entry in ``items`` at such a path wins)."""
    writable(repo, branch)
    count = 0

    def staged() -> Iterator[StagedEntry]:
        nonlocal count
        for path in delete:
            yield StagedEntry(validate.object_key(path), None, None)
        for e in items:
            validate.object_key(e.path)
            if e.external:
                raise InvalidArgument(
                    f"entry {e.path!r} has an external address; only import creates those"
                )
            count += 1
            yield e.to_staged()

    repo.staging.stage(repo.name, branch, staged())
    return count


def delete(repo: RepoContext, branch: str, path: str) -> None:
    """Stage the removal of ``path``; raises ObjectNotFound when it is not there."""
    stat(repo, branch, path)
    writable(repo, branch)
    repo.staging.stage(repo.name, branch, [StagedEntry(validate.object_key(path), None, None)])


def delete_many(repo: RepoContext, branch: str, paths: Iterable[str]) -> int:
    """Stage the removal of every path (absent ones included); returns how many."""
    writable(repo, branch)
    keys = [StagedEntry(validate.object_key(p), None, None) for p in paths]
    repo.staging.stage(repo.name, branch, keys)
    return len(keys)


def guess_type(path: str) -> str:
    """The content type of ``path`` by its extension, or the default one."""
    return mimetypes.guess_type(path)[0] or entries.DEFAULT_CONTENT_TYPE
