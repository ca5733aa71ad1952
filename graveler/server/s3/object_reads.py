"""GetObject, HeadObject and GetObjectAttributes: an object at any ref expression.

Integrity of reads, as S3 offers it: a whole-object GET or HEAD that asks for checksums
(``x-amz-checksum-mode: ENABLED``, which boto3 and the aws CLI send by default) gets
the object's recorded SHA-256 in ``x-amz-checksum-sha256`` and the client checks the bytes
end to end. Objects up to :data:`SMALL_OBJECT` are read whole and checked on the server
too; larger ones are checked as they stream only when the server runs with
``--verify-reads`` (:func:`_read_pieces`), which costs about a third of GET throughput on
two cores. A stored object shorter than recorded always breaks the answer off.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import AsyncIterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import BinaryIO

from graveler.core.errors import CorruptFile, InvalidRef, ObjectNotFound, RefNotFound
from graveler.repository import Repository
from graveler.server.s3 import conditions
from graveler.server.s3.call import Call
from graveler.server.s3.errors import S3Error, no_such_key
from graveler.server.s3.request import SYSTEM_HEADERS, SYSTEM_PREFIX, S3Request
from graveler.server.s3.xml import document, element, group
from graveler.storage.entry import ObjectEntry, etag_of
from graveler.views.reads import open_unverified

#: Objects up to this size are read whole (with their stat) in one call.
SMALL_OBJECT = 1 << 20
#: The size of the pieces an object streams in (and of the batches a body is read in).
STREAM_PIECE = 1 << 20
_OVERRIDES = {
    "response-content-type": "content-type",
    "response-content-language": "content-language",
    "response-expires": "expires",
    "response-cache-control": "cache-control",
    "response-content-disposition": "content-disposition",
    "response-content-encoding": "content-encoding",
}


async def get_object(call: Call, *, head: bool = False) -> None:
    repo = await call.repository()
    request = call.request
    if not request.path:
        raise no_such_key(request.key or "")
    found = await call.run(_prepare_read, call, repo, head)
    entry, status, data, span = found
    headers = object_headers(entry)
    if status is not None:
        await call.respond(status, b"", {k: headers[k] for k in ("ETag", "Last-Modified")})
        return
    headers.update(_overrides(call))
    if span is None and _wants_checksum(request):
        headers.update(checksum_headers(entry))
    if "partNumber" in request.query and (parts := parts_count(entry)) is not None:
        headers["x-amz-mp-parts-count"] = str(parts)
    length = entry.size if span is None else span[1] - span[0] + 1
    code = 200
    if span is not None:
        code = 206
        headers["Content-Range"] = f"bytes {span[0]}-{span[1]}/{entry.size}"
    content_type = headers.pop("content-type", entry.content_type)
    if head:
        await call.respond(code, b"", headers, content_type=content_type, length=length)
    elif data is not None:
        await call.respond(code, data, headers, content_type=content_type)
    else:
        await call.start(code, headers, content_type=content_type, length=length)
        await call.stream(_read_pieces(call, repo, entry, span))


#: What GetObjectAttributes may ask for (``x-amz-object-attributes``), in S3's answer order.
OBJECT_ATTRIBUTES = ("ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize")


async def get_object_attributes(call: Call) -> None:
    """GetObjectAttributes: the attributes the ``x-amz-object-attributes`` header names.
    Part boundaries are not kept once an upload is assembled, so ObjectParts gives the
    count of parts only; the checksum is the whole object's SHA-256."""
    repo = await call.repository()
    request = call.request
    if not request.path:
        raise no_such_key(request.key or "")
    wanted = {a.strip() for a in (request.header("x-amz-object-attributes") or "").split(",")}
    wanted.discard("")
    unknown = wanted - set(OBJECT_ATTRIBUTES)
    if not wanted or unknown:
        what = f"unknown attribute {sorted(unknown)[0]!r}" if unknown else "no attribute named"
        raise S3Error("InvalidArgument", f"x-amz-object-attributes: {what}", 400)
    entry = await call.run(entry_at, repo, request.ref, request.path, request.key or "")
    fields = {
        "ETag": element("ETag", etag_of(entry)),
        "Checksum": _checksum_element(entry),
        "ObjectParts": _parts_element(entry),
        "StorageClass": element("StorageClass", "STANDARD"),
        "ObjectSize": element("ObjectSize", entry.size),
    }
    body = document(
        "GetObjectAttributesResponse", (fields[a] for a in OBJECT_ATTRIBUTES if a in wanted)
    )
    await call.xml(body, headers={"Last-Modified": conditions.http_date(entry.mtime)})


def _checksum_element(entry: ObjectEntry) -> str:
    found = checksum_headers(entry)
    if not found:
        return ""
    return group(
        "Checksum",
        {"ChecksumSHA256": found["x-amz-checksum-sha256"], "ChecksumType": "FULL_OBJECT"},
    )


def parts_count(entry: ObjectEntry) -> int | None:
    """How many parts the object was assembled from (None: it was sent whole)."""
    _, dash, count = etag_of(entry).rpartition("-")
    return int(count) if dash and count.isdigit() else None


def _parts_element(entry: ObjectEntry) -> str:
    """ObjectParts of an object assembled from parts (none for one sent whole, as S3)."""
    count = parts_count(entry)
    return "" if count is None else group("ObjectParts", {"PartsCount": count})


def _wants_checksum(request: S3Request) -> bool:
    return (request.header("x-amz-checksum-mode") or "").upper() == "ENABLED"


def checksum_headers(entry: ObjectEntry) -> dict[str, str]:
    """S3's checksum headers for the whole object: its SHA-256, base64 as S3 sends it
    (none for an entry whose recorded checksum is not a SHA-256)."""
    try:
        raw = bytes.fromhex(entry.checksum)
    except ValueError:
        return {}
    if len(raw) != 32:
        return {}
    digest = base64.b64encode(raw).decode()
    return {"x-amz-checksum-sha256": digest, "x-amz-checksum-type": "FULL_OBJECT"}


def _prepare_read(
    call: Call, repo: Repository, head: bool
) -> tuple[ObjectEntry, int | None, bytes | None, tuple[int, int] | None]:
    """The entry, a precondition's status (304), the bytes of a small object, the range."""
    request = call.request
    entry = entry_at(repo, request.ref, request.path, request.key or "")
    _check_part_number(request.query.get("partNumber"), entry)
    status = conditions.check_read(request, entry)
    if status is not None:
        return entry, status, None, None
    span = conditions.byte_range(request.header("range"), entry.size)
    if head or entry.size > SMALL_OBJECT:
        return entry, None, None, span
    data = repo.read_entry(entry)
    return entry, None, data if span is None else data[span[0] : span[1] + 1], span


async def _read_pieces(
    call: Call, repo: Repository, entry: ObjectEntry, span: tuple[int, int] | None
) -> AsyncIterator[bytes]:
    """The object's bytes (or ``span`` of them) in pieces; the next piece is read on a
    worker thread while the current one is sent. With ``call.verify_reads``, a whole
    object's pieces are hashed on a thread of their own at the same time, and its last
    piece is held back until size and SHA-256 are the recorded ones (CorruptFile otherwise:
    the client never gets a complete object that is not what was written). An object that
    ends early is always CorruptFile."""
    stream: BinaryIO = await call.run(open_unverified, repo, entry)
    loop = asyncio.get_running_loop()
    check = _Digest(entry) if span is None and call.verify_reads else None
    try:
        first, last = span if span is not None else (0, entry.size - 1)
        if first:
            await call.run(stream.seek, first)
        left = last - first + 1
        pending = loop.run_in_executor(None, stream.read, min(STREAM_PIECE, left))
        while left > 0:
            piece = await pending
            if not piece:
                raise CorruptFile(f"object {entry.path!r} ended {left} bytes early")
            left -= len(piece)
            if check is not None:
                check.add(piece)
            if left > 0:
                pending = loop.run_in_executor(None, stream.read, min(STREAM_PIECE, left))
            elif check is not None:
                await loop.run_in_executor(None, check.verify)
            yield piece
    finally:
        await call.run(stream.close)
        if check is not None:
            check.close()


class _Digest:
    """SHA-256 and size of pieces, hashed in order on a thread of their own."""

    def __init__(self, entry: ObjectEntry) -> None:
        self._entry = entry
        self._hash = hashlib.sha256()
        self._size = 0
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="graveler-get-hash")
        self._last: Future[None] | None = None

    def add(self, piece: bytes) -> None:
        self._size += len(piece)
        self._last = self._pool.submit(self._hash.update, piece)

    def verify(self) -> None:
        if self._last is not None:
            self._last.result()
        entry = self._entry
        if self._size != entry.size or self._hash.hexdigest() != entry.checksum:
            raise CorruptFile(
                f"object {entry.path!r} ({entry.physical_address}) does not match its recorded "
                "size and SHA-256: the stored object is damaged (run 'graveler fsck "
                "--verify-objects')"
            )

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _check_part_number(text: str | None, entry: ObjectEntry) -> None:
    """``?partNumber=N`` reads part N of a multipart object. Part boundaries are not kept
    once an upload is assembled, so only part 1 of an object sent in one piece (the whole
    object) can be served."""
    if text is None:
        return
    if text != "1":
        raise S3Error("InvalidPartNumber", "the requested part number is not satisfiable", 416)
    if parts_count(entry) not in (None, 1):
        raise S3Error("NotImplemented", "reading one part of an object assembled from parts", 501)


def object_headers(entry: ObjectEntry) -> dict[str, str]:
    headers = {
        "ETag": conditions.quoted(entry),
        "Last-Modified": conditions.http_date(entry.mtime),
        "Accept-Ranges": "bytes",
    }
    for name, value in entry.metadata.items():
        if name.startswith(SYSTEM_PREFIX) and name[len(SYSTEM_PREFIX) :] in SYSTEM_HEADERS:
            headers[name[len(SYSTEM_PREFIX) :]] = value
        elif name and name.isascii() and " " not in name and ":" not in name:
            headers[f"x-amz-meta-{name.lower()}"] = value
    return headers


def _overrides(call: Call) -> dict[str, str]:
    return {
        header: call.request.query[q] for q, header in _OVERRIDES.items() if q in call.request.query
    }


def entry_at(repo: Repository, ref: str, path: str, key: str) -> ObjectEntry:
    """The entry at ``path`` in ``ref``; S3's NoSuchKey (naming ``key``) when there is none."""
    try:
        return repo.stat(ref, path)
    except (ObjectNotFound, RefNotFound, InvalidRef):
        raise no_such_key(key) from None
