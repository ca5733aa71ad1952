"""Multipart upload operations over :mod:`graveler.versioning.multipart`: create, upload part (and
upload part copy), complete, abort, list parts and list uploads."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from graveler.core.errors import InvalidRef, ObjectNotFound, RefNotFound, UploadNotFound
from graveler.core.model import MultipartUpload, UploadedPart
from graveler.repository import Repository
from graveler.server.s3 import conditions
from graveler.server.s3.call import Call
from graveler.server.s3.errors import S3Error
from graveler.server.s3.listing import OWNER
from graveler.server.s3.objects import (
    SMALL_BODY,
    body_reader,
    content_type_of,
    copy_source,
    writable,
)
from graveler.server.s3.request import S3Request
from graveler.server.s3.xml import document, element, group, parse, text_of, timestamp
from graveler.storage.entry import ObjectEntry
from graveler.versioning.multipart import Multipart, assembled_by
from graveler.views.reads import open_unverified

MAX_PARTS_LISTED = 1000


async def create_upload(call: Call) -> None:
    request = call.request
    repo = await call.repository(write=True)
    await call.run(writable, repo, request.ref)
    if not request.path:
        raise S3Error("InvalidArgument", "a key needs a path after the branch", 400)
    upload = await call.run(
        repo.multipart.create,
        request.ref,
        request.path,
        content_type=content_type_of(request),
        metadata=request.stored_metadata(),
        initiator=request.caller,
    )
    fields = {"Bucket": request.bucket, "Key": request.key, "UploadId": upload.upload_id}
    await call.xml(
        document("InitiateMultipartUploadResult", [element(k, v) for k, v in fields.items()])
    )


async def _upload_of(call: Call, repo: Repository) -> tuple[Multipart, MultipartUpload]:
    multipart = repo.multipart
    upload = await call.run(multipart.get, call.request.query["uploadId"])
    if f"{upload.branch}/{upload.path}" != call.request.key:
        raise S3Error("NoSuchUpload", "the upload does not belong to this key", 404)
    return multipart, upload


async def upload_part(call: Call) -> None:
    repo = await call.repository(write=True)
    multipart, upload = await _upload_of(call, repo)
    number = _part_number(call.request.query.get("partNumber", ""))
    if call.request.header("x-amz-copy-source") is not None:
        await _upload_part_copy(call, multipart, upload, number)
        return
    body = call.body()

    def verify(md5: str, sha256: str) -> None:
        body.check(md5, sha256)

    declared = body.decoded_length
    data: object
    if declared is not None and declared <= SMALL_BODY:
        data = await body.read_all(SMALL_BODY)
    else:
        data = body_reader(body)
    part = await call.run(multipart.upload_part, upload.upload_id, number, data, verify=verify)
    await call.respond(200, b"", {"ETag": f'"{part.md5}"', **body.checksums})


async def _upload_part_copy(
    call: Call, multipart: Multipart, upload: MultipartUpload, number: int
) -> None:
    source_repo, ref, path = await copy_source(call)
    entry = await call.run(source_repo.stat, ref, path)
    conditions.check_read(call.request, entry, prefix="x-amz-copy-source-if-")
    span = copy_source_range(call.request.header("x-amz-copy-source-range"), entry.size)

    def copy() -> UploadedPart:
        if span is None:
            with source_repo.open_entry(entry) as stream:
                return multipart.upload_part(upload.upload_id, number, stream)
        # A range is read from the stored bytes as a ranged GET is.
        with open_unverified(source_repo, entry) as stream:
            _skip(stream, span[0])
            return multipart.upload_part(
                upload.upload_id, number, _limited(stream, span[1] - span[0] + 1)
            )

    part = await call.run(copy)
    result = document(
        "CopyPartResult",
        [element("LastModified", timestamp(part.created)), element("ETag", f'"{part.md5}"')],
    )
    await call.xml(result)


def _skip(stream: BinaryIO, count: int) -> None:
    """Move ``stream`` ``count`` bytes on: a seek where it can (a local file), else reading
    past them (an S3 namespace's bytes arrive as a network stream, which cannot seek)."""
    if stream.seekable():
        stream.seek(count)
        return
    while count > 0:
        piece = stream.read(min(count, 1 << 20))
        if not piece:
            return
        count -= len(piece)


_COPY_RANGE = re.compile(r"bytes=(\d+)-(\d+)")


def copy_source_range(text: str | None, size: int) -> tuple[int, int] | None:
    """The ``(first, last)`` bytes of ``x-amz-copy-source-range``: stricter than a GET's
    Range, as S3 is. Anything but ``bytes=FIRST-LAST`` is InvalidArgument; a range that is
    not inside the source object is InvalidRange."""
    if text is None:
        return None
    found = _COPY_RANGE.fullmatch(text.strip())
    if found is None:
        raise S3Error(
            "InvalidArgument",
            f"x-amz-copy-source-range must be bytes=FIRST-LAST, not {text!r}",
            400,
        )
    first, last = int(found[1]), int(found[2])
    if first > last or last >= size:
        raise S3Error(
            "InvalidRange",
            f"the range {first}-{last} is not inside the {size}-byte source object",
            416,
        )
    return first, last


def _limited(stream: BinaryIO, length: int) -> Iterator[bytes]:
    """The next ``length`` bytes of ``stream``, piece by piece (streamed, never slurped)."""
    while length > 0:
        piece = stream.read(min(length, 1 << 20))
        if not piece:
            return
        length -= len(piece)
        yield piece


async def complete_upload(call: Call) -> None:
    """CompleteMultipartUpload. A retry of a completion that succeeded (its answer lost on
    the way) gets the same answer while the key still holds the object it made, as S3
    answers; otherwise a finished upload is NoSuchUpload. ``If-None-Match: *`` and
    ``If-Match`` hold as on PutObject, checked where the object is staged."""
    repo = await call.repository(write=True)
    try:
        multipart, upload = await _upload_of(call, repo)
    except UploadNotFound:
        done = await call.run(_completed_before, repo, call.request)
        if done is None:
            raise
        await call.body().read_all(1 << 20)
        await _completed(call, done)
        return
    root = parse(await call.body().read_all(1 << 20))
    listed = []
    for node in root.findall("Part"):
        number = _part_number(text_of(node, "PartNumber", "") or "")
        listed.append((number, text_of(node, "ETag", "") or ""))
    condition = conditions.write_condition(call.request)  # If-None-Match: *, If-Match
    entry = await call.run(multipart.complete, upload.upload_id, listed, condition)
    await _completed(call, entry)


async def _completed(call: Call, entry: ObjectEntry) -> None:
    fields = {
        "Location": f"/{call.request.bucket}/{call.request.key}",
        "Bucket": call.request.bucket,
        "Key": call.request.key,
        "ETag": conditions.quoted(entry),
    }
    await call.xml(
        document("CompleteMultipartUploadResult", [element(k, v) for k, v in fields.items()])
    )


def _completed_before(repo: Repository, request: S3Request) -> ObjectEntry | None:
    """The object at the request's key if the request's upload made it, else None."""
    try:
        entry = repo.stat(request.ref, request.path)
    except (ObjectNotFound, RefNotFound, InvalidRef):
        return None
    return entry if assembled_by(entry, request.query["uploadId"]) else None


async def abort_upload(call: Call) -> None:
    repo = await call.repository(write=True)
    multipart, upload = await _upload_of(call, repo)
    await call.run(multipart.abort, upload.upload_id)
    await call.respond(204)


async def list_parts(call: Call) -> None:
    repo = await call.repository()
    multipart, upload = await _upload_of(call, repo)
    query = call.request.query
    after = int(query.get("part-number-marker", "0") or 0)
    limit = min(int(query.get("max-parts", MAX_PARTS_LISTED) or MAX_PARTS_LISTED), MAX_PARTS_LISTED)
    parts = await call.run(multipart.parts, upload.upload_id, after=after, limit=limit + 1)
    truncated = len(parts) > limit
    parts = parts[:limit]
    fields = [
        element("Bucket", call.request.bucket),
        element("Key", call.request.key),
        element("UploadId", upload.upload_id),
        group("Initiator", {"ID": upload.initiator, "DisplayName": upload.initiator}),
        group("Owner", OWNER),
        element("StorageClass", "STANDARD"),
        element("PartNumberMarker", after),
        element("NextPartNumberMarker", parts[-1].part_number if parts else after),
        element("MaxParts", limit),
        element("IsTruncated", truncated),
    ]
    fields += [
        group(
            "Part",
            {
                "PartNumber": p.part_number,
                "LastModified": timestamp(p.created),
                "ETag": f'"{p.md5}"',
                "Size": p.size,
            },
        )
        for p in parts
    ]
    await call.xml(document("ListPartsResult", fields))


async def list_uploads(call: Call) -> None:
    repo = await call.repository()
    query = call.request.query
    prefix = query.get("prefix", "")
    key_marker = query.get("key-marker", "")
    id_marker = query.get("upload-id-marker", "")
    limit = min(
        int(query.get("max-uploads", MAX_PARTS_LISTED) or MAX_PARTS_LISTED), MAX_PARTS_LISTED
    )
    uploads = await call.run(_uploads_under, repo, prefix, key_marker, id_marker, limit + 1)
    truncated = len(uploads) > limit
    uploads = uploads[:limit]
    fields = [
        element("Bucket", call.request.bucket),
        element("KeyMarker", key_marker),
        element("UploadIdMarker", id_marker),
        element("Prefix", prefix),
        element("MaxUploads", limit),
        element("IsTruncated", truncated),
    ]
    if truncated and uploads:
        fields.append(element("NextKeyMarker", f"{uploads[-1].branch}/{uploads[-1].path}"))
        fields.append(element("NextUploadIdMarker", uploads[-1].upload_id))
    fields += [
        group(
            "Upload",
            [
                element("Key", f"{u.branch}/{u.path}"),
                element("UploadId", u.upload_id),
                group("Initiator", {"ID": u.initiator, "DisplayName": u.initiator}),
                group("Owner", OWNER),
                element("StorageClass", "STANDARD"),
                element("Initiated", timestamp(u.created)),
            ],
        )
        for u in uploads
    ]
    await call.xml(document("ListMultipartUploadsResult", fields))


def _uploads_under(
    repo: Repository, prefix: str, key_marker: str, id_marker: str, limit: int
) -> list[MultipartUpload]:
    """Uploads whose ``BRANCH/PATH`` starts with ``prefix``, past the markers, in key order."""
    found: list[MultipartUpload] = []
    for upload in _all_uploads(repo):
        key = f"{upload.branch}/{upload.path}"
        if not key.startswith(prefix) or (key, upload.upload_id) <= (key_marker, id_marker):
            continue
        found.append(upload)
    found.sort(key=lambda u: (f"{u.branch}/{u.path}", u.upload_id))
    return found[:limit]


def _all_uploads(repo: Repository) -> list[MultipartUpload]:
    uploads: list[MultipartUpload] = []
    after = ("", "")
    while True:
        page = repo.multipart.list(after=after, limit=1000)
        uploads += page
        if len(page) < 1000:
            return uploads
        after = (page[-1].path, page[-1].upload_id)


def _part_number(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise S3Error("InvalidArgument", "part number must be an integer", 400) from None
    if not 1 <= number <= 10_000:
        raise S3Error("InvalidArgument", "part number must be an integer between 1 and 10000", 400)
    return number
