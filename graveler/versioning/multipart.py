"""Multipart uploads: an object sent in numbered parts, staged on its branch only when the
upload is completed (S3's protocol, served by the S3 gateway, usable from Python too).

State lives in the refs database (:class:`graveler.storage.refs.sql_server.SqlUploadStore`): the
upload's target and, per part, where its bytes are and their MD5. Part bytes are objects of
their own under ``_graveler/uploads/<upload ID>/`` in the namespace, outside ``data/``: GC
never sweeps them while the upload lives, and :func:`expire_uploads` (which GC calls)
aborts uploads left unfinished. Nothing is kept in a process, so any worker (or a worker
restarted after ``kill -9``) can upload further parts, complete or abort an upload.

Completing concatenates the listed parts into one new object under ``data/`` (hashing it
for its checksum), takes the upload out of the database (of two racing completions exactly
one does), stages the object as :func:`graveler.versioning.writes.put` would, then deletes the
parts. Its ETag is S3's: the MD5 of the parts' binary MD5s, ``-`` and the number of parts.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import BinaryIO

from graveler.core import validate
from graveler.core.errors import (
    EntityTooSmall,
    InvalidArgument,
    InvalidPart,
    InvalidPartOrder,
    NotFound,
    UploadNotFound,
)
from graveler.core.model import MultipartUpload, UploadedPart
from graveler.storage.entry import ObjectEntry
from graveler.storage.objects import new_physical_address
from graveler.storage.objectstore._io import iter_chunks
from graveler.storage.refs.sql_server import SqlUploadStore
from graveler.versioning.branches import writable_branch
from graveler.versioning.writes import Condition, condition_check, guess_type, stage_stored
from graveler.views.context import RepoContext

UPLOADS_PREFIX = "_graveler/uploads/"
MIN_PART_SIZE = 5 << 20
MAX_PART_NUMBER = 10_000
#: Uploads unfinished for this long are aborted by :func:`expire_uploads` (as S3's
#: AbortIncompleteMultipartUpload lifecycle rule would, at its common setting).
DEFAULT_EXPIRY = timedelta(days=7)
_COPY_CHUNK = 1 << 20


@dataclass(frozen=True)
class Multipart:
    """The multipart uploads of one repository (``repo.multipart``)."""

    repo: RepoContext
    uploads: SqlUploadStore

    def create(
        self,
        branch: str,
        path: str,
        *,
        content_type: str | None = None,
        metadata: Mapping[str, str] | None = None,
        initiator: str = "",
    ) -> MultipartUpload:
        """Start an upload to ``path`` on ``branch``; raises BranchNotFound or
        ProtectedBranch (checked again when it completes)."""
        validate.written_key(path)
        meta = validate.metadata(metadata)
        writable_branch(self.repo, branch)
        upload = MultipartUpload(
            upload_id=os.urandom(24).hex(),
            repo=self.repo.name,
            branch=branch,
            path=path,
            content_type=content_type or guess_type(path),
            metadata=meta,
            initiator=initiator,
            created=datetime.now(UTC),
        )
        self.uploads.create(upload)
        return upload

    def get(self, upload_id: str) -> MultipartUpload:
        """The upload; UploadNotFound when it is not one of this repository's."""
        try:
            upload = self.uploads.get(upload_id)
        except NotFound:
            upload = None
        if upload is None or upload.repo != self.repo.name:
            raise UploadNotFound(f"no multipart upload {upload_id!r} in {self.repo.name!r}")
        return upload

    def upload_part(
        self,
        upload_id: str,
        part_number: int,
        data: bytes | BinaryIO | Iterable[bytes],
        *,
        verify: Callable[[str, str], object] | None = None,
    ) -> UploadedPart:
        """Store part ``part_number`` (1 to 10,000; a later upload of a number replaces an
        earlier one) from ``data``; durable on return. ``verify(md5, sha256)`` (hex digests
        of the part) runs before the part is recorded: what it raises discards the part.
        Raises UploadNotFound."""
        if not isinstance(part_number, int) or not 1 <= part_number <= MAX_PART_NUMBER:
            raise InvalidArgument(f"part number must be 1 to {MAX_PART_NUMBER}: {part_number!r}")
        self.get(upload_id)
        address = f"{UPLOADS_PREFIX}{upload_id}/{part_number:05d}-{os.urandom(8).hex()}"
        md5 = hashlib.md5(usedforsecurity=False)
        with self.repo.store.open_writer(address, fresh=True) as writer:
            for chunk in _chunks(data):
                md5.update(chunk)
                writer.write(chunk)
        info = writer.commit()
        part = UploadedPart(upload_id, part_number, address, info.size, md5.hexdigest(), info.mtime)
        try:
            if verify is not None:
                verify(part.md5, writer.sha256())
            replaced = self.uploads.put_part(part)
        except BaseException:
            _delete_quietly(self.repo, [address])
            raise
        if replaced is not None:
            _delete_quietly(self.repo, [replaced.physical_address])
        return part

    def parts(self, upload_id: str, *, after: int = 0, limit: int = 1000) -> list[UploadedPart]:
        """Uploaded parts by number, past ``after``. Raises UploadNotFound."""
        self.get(upload_id)
        return self.uploads.parts(upload_id, after=after, limit=limit)

    def list(
        self, *, after: tuple[str, str] = ("", ""), limit: int = 1000
    ) -> list[MultipartUpload]:
        """Uploads in progress ordered by (path, upload ID), past ``after``."""
        return self.uploads.list(self.repo.name, after=after, limit=limit)

    def complete(
        self,
        upload_id: str,
        parts: Sequence[tuple[int, str]],
        condition: Condition | None = None,
    ) -> ObjectEntry:
        """Assemble the listed ``(part number, ETag)`` parts into the object and stage it,
        if ``condition`` (as :func:`~graveler.versioning.writes.put`'s) holds in the staging
        transaction. Raises UploadNotFound, InvalidPartOrder, InvalidPart, EntityTooSmall,
        PreconditionFailed; a failed completion leaves the upload as it was (it can be
        completed or aborted again)."""
        upload = self.get(upload_id)
        chosen = _chosen_parts(self.uploads.parts(upload_id), parts)
        entry = _assemble(self.repo, upload, chosen)
        try:
            every = self.uploads.finish(upload_id)
        except NotFound:  # completed or aborted meanwhile
            _delete_quietly(self.repo, [entry.physical_address])
            raise UploadNotFound(f"multipart upload {upload_id!r} was finished meanwhile") from None
        try:
            check = condition_check(self.repo, upload.branch, upload.path, condition)
            stage_stored(self.repo, upload.branch, [entry], check=check)
        except BaseException:
            _restore(self.uploads, upload, every)
            raise
        _delete_quietly(self.repo, [p.physical_address for p in every])
        return entry

    def abort(self, upload_id: str) -> None:
        """Drop the upload and its parts. Raises UploadNotFound."""
        self.get(upload_id)
        try:
            parts = self.uploads.finish(upload_id)
        except NotFound:
            raise UploadNotFound(f"multipart upload {upload_id!r} was finished meanwhile") from None
        _delete_quietly(self.repo, [p.physical_address for p in parts])


def expire_uploads(
    multipart: Multipart,
    older_than: timedelta = DEFAULT_EXPIRY,
    *,
    now: datetime | None = None,
    dry_run: bool = False,
) -> int:
    """Abort (or with ``dry_run`` only count) the repository's uploads started more than
    ``older_than`` before ``now``; returns how many."""
    before = (now or datetime.now(UTC)) - older_than
    done = 0
    for upload in multipart.uploads.older_than(multipart.repo.name, before):
        if dry_run:
            done += 1
            continue
        with contextlib.suppress(UploadNotFound):
            multipart.abort(upload.upload_id)
            done += 1
    return done


def orphan_parts(multipart: Multipart, cutoff: datetime) -> list[str]:
    """Part files older than ``cutoff`` whose upload is gone (a worker killed between
    finishing an upload and deleting its parts leaves them)."""
    orphans: list[str] = []
    known: dict[str, bool] = {}
    for info in multipart.repo.store.list(UPLOADS_PREFIX):
        upload_id = info.key[len(UPLOADS_PREFIX) :].split("/", 1)[0]
        if upload_id not in known:
            try:
                multipart.uploads.get(upload_id)
                known[upload_id] = True
            except NotFound:
                known[upload_id] = False
        if not known[upload_id] and info.mtime < cutoff:
            orphans.append(info.key)
    return orphans


def _chosen_parts(
    uploaded: Sequence[UploadedPart], listed: Sequence[tuple[int, str]]
) -> list[UploadedPart]:
    if not listed:
        raise InvalidArgument("a multipart upload is completed with at least one part")
    numbers = [n for n, _ in listed]
    if any(a >= b for a, b in itertools.pairwise(numbers)):
        raise InvalidPartOrder("the parts must be listed in ascending order of part number")
    by_number = {p.part_number: p for p in uploaded}
    chosen = []
    for number, etag in listed:
        part = by_number.get(number)
        if part is None or etag.strip('"') != part.md5:
            raise InvalidPart(f"part {number} was not uploaded with ETag {etag!r}")
        chosen.append(part)
    for part in chosen[:-1]:
        if part.size < MIN_PART_SIZE:
            raise EntityTooSmall(
                f"part {part.part_number} has {part.size} bytes; every part but the last "
                f"needs at least {MIN_PART_SIZE}"
            )
    return chosen


def _assemble(
    repo: RepoContext, upload: MultipartUpload, parts: Sequence[UploadedPart]
) -> ObjectEntry:
    """The parts concatenated into a new durable object, described by its entry. Its key
    ends with the upload's ID (:func:`assembled_by`)."""
    address = f"{new_physical_address()}-{upload.upload_id}"
    with repo.store.open_writer(address, fresh=True) as writer:
        for part in parts:
            with repo.store.open(part.physical_address) as source:
                while chunk := source.read(_COPY_CHUNK):
                    writer.write(chunk)
    info = writer.commit()
    digests = b"".join(bytes.fromhex(p.md5) for p in parts)
    etag = f"{hashlib.md5(digests, usedforsecurity=False).hexdigest()}-{len(parts)}"
    return ObjectEntry(
        path=upload.path,
        physical_address=address,
        size=info.size,
        checksum=writer.sha256(),
        mtime=info.mtime,
        content_type=upload.content_type,
        metadata=dict(upload.metadata),
        etag=etag,
    )


def assembled_by(entry: ObjectEntry, upload_id: str) -> bool:
    """Whether ``entry`` is the object that completing upload ``upload_id`` made (so a
    retried completion, whose first answer was lost, can be answered as the first was)."""
    return entry.physical_address.endswith(f"-{upload_id}")


def _restore(
    uploads: SqlUploadStore, upload: MultipartUpload, parts: Sequence[UploadedPart]
) -> None:
    """Put a finished upload back (its staging failed), best effort."""
    with contextlib.suppress(Exception):
        uploads.create(upload)
        for part in parts:
            uploads.put_part(part)


def _delete_quietly(repo: RepoContext, addresses: Iterable[str]) -> None:
    for address in addresses:
        with contextlib.suppress(Exception):
            repo.store.delete(address)


def _chunks(data: bytes | BinaryIO | Iterable[bytes]) -> Iterator[bytes]:
    """The bytes of ``data``: bytes, a binary file object, or an iterable of byte chunks."""
    if isinstance(data, bytes | bytearray | memoryview) or hasattr(data, "read"):
        return iter_chunks(data)  # type: ignore[arg-type]
    return iter(data)
