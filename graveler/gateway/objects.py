"""Object operations: GetObject, HeadObject, PutObject, CopyObject, DeleteObject.

Keys are ``REF/PATH``. Reads take any ref expression; writes and deletes need a branch
(:func:`writable`): a tag, a commit or an expression answers MethodNotAllowed, a protected
branch AccessDenied. A PUT is answered once its object is durable and staged
(:func:`graveler.writes.put`); a copy within a repository stages the source's bytes under
the new path without copying them.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import hashlib
import io
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from typing import BinaryIO
from urllib.parse import unquote

from graveler.branches import writable_branch
from graveler.entry import ObjectEntry, etag_of
from graveler.errors import BranchNotFound, CorruptFile, InvalidRef, ObjectNotFound, RefNotFound
from graveler.gateway import conditions
from graveler.gateway.body import Body
from graveler.gateway.call import Call
from graveler.gateway.errors import S3Error, method_not_allowed, no_such_key
from graveler.gateway.request import S3Request
from graveler.gateway.xml import document, element, timestamp
from graveler.reads import open_unverified
from graveler.refexpr import parse_ref
from graveler.repository import Repository

#: What S3 stores for an object sent without a Content-Type.
DEFAULT_CONTENT_TYPE = "binary/octet-stream"
#: Bodies up to this size are read whole before one call into the engine.
SMALL_BODY = 1 << 20
#: Objects up to this size are read whole (with their stat) in one call.
SMALL_OBJECT = 1 << 20
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


def _prepare_read(
    call: Call, repo: Repository, head: bool
) -> tuple[ObjectEntry, int | None, bytes | None, tuple[int, int] | None]:
    """The entry, a precondition's status (304), the bytes of a small object, the range."""
    request = call.request
    entry = _stat(repo, request.ref, request.path, request.key or "")
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
    """The object's bytes (or ``span`` of them) in pieces. The next piece is read on a
    worker thread while the current one is sent; a whole object's pieces are hashed on a
    thread of their own at the same time, and its last piece is held back until size and
    SHA-256 are the recorded ones (CorruptFile otherwise: the client never gets a complete
    object that is not what was written)."""
    stream: BinaryIO = await call.run(open_unverified, repo, entry)
    loop = asyncio.get_running_loop()
    check = None if span is not None else _Digest(entry)
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
    if "-" in etag_of(entry) and not etag_of(entry).endswith("-1"):
        raise S3Error("NotImplemented", "reading one part of an object assembled from parts", 501)


def object_headers(entry: ObjectEntry) -> dict[str, str]:
    headers = {
        "ETag": conditions.quoted(entry),
        "Last-Modified": conditions.http_date(entry.mtime),
        "Accept-Ranges": "bytes",
    }
    for name, value in entry.metadata.items():
        if name and name.isascii() and " " not in name and ":" not in name:
            headers[f"x-amz-meta-{name.lower()}"] = value
    return headers


def _overrides(call: Call) -> dict[str, str]:
    return {
        header: call.request.query[q] for q, header in _OVERRIDES.items() if q in call.request.query
    }


def _stat(repo: Repository, ref: str, path: str, key: str) -> ObjectEntry:
    try:
        return repo.stat(ref, path)
    except (ObjectNotFound, RefNotFound, InvalidRef):
        raise no_such_key(key) from None


async def put_object(call: Call) -> None:
    request = call.request
    if request.header("x-amz-copy-source") is not None:
        await copy_object(call)
        return
    repo = await call.repository(write=True)
    await call.run(writable, repo, request.ref)
    if not request.path:
        raise S3Error("InvalidArgument", "a key needs a path after the branch", 400)
    body = call.body()
    entry = await store_and_stage(call, repo, body)
    headers = {"ETag": conditions.quoted(entry), **body.checksums}
    await call.respond(200, b"", headers)


async def store_and_stage(call: Call, repo: Repository, body: Body) -> ObjectEntry:
    """Read the body into a new object at the request's path and stage it on the branch,
    checking the body's digests (and a conditional PUT's precondition) first."""
    request = call.request
    options = {
        "content_type": content_type_of(request),
        "metadata": request.user_metadata(),
        "condition": conditions.write_condition(request),
        "verify": lambda e: body.check(e.etag, e.checksum),
    }
    declared = body.decoded_length
    if declared is not None and declared <= SMALL_BODY:
        data = await body.read_all(SMALL_BODY)
        return await call.run(repo.put, request.ref, request.path, data, **options)
    reader = _BodyReader(body)
    try:
        return await call.run(repo.put, request.ref, request.path, reader, **options)
    finally:
        reader.close()


def content_type_of(request: S3Request) -> str:
    """The content type to store: the client's, else S3's default."""
    return request.header("content-type") or DEFAULT_CONTENT_TYPE


def writable(repo: Repository, ref: str) -> None:
    """Refuse writes to anything but an existing, unprotected branch."""
    try:
        expression = parse_ref(ref)
    except InvalidRef:
        raise method_not_allowed(
            f"{ref!r} is not a branch: objects are written to branches"
        ) from None
    if not expression.is_plain:
        raise method_not_allowed(f"{ref!r} is a ref expression: objects are written to branches")
    try:
        writable_branch(repo, ref)
    except BranchNotFound:
        try:
            repo.resolve(ref)
        except (RefNotFound, InvalidRef):
            raise S3Error("NoSuchKey", f"no branch {ref!r} in {repo.name!r}", 404) from None
        raise method_not_allowed(
            f"{ref!r} is a tag or commit: objects are written to branches"
        ) from None


async def delete_object(call: Call) -> None:
    request = call.request
    repo = await call.repository(write=True)
    await call.run(writable, repo, request.ref)
    if request.path:
        await call.run(delete_quietly, repo, request.ref, request.path)
    await call.respond(204)


def delete_quietly(repo: Repository, branch: str, path: str) -> None:
    """Delete ``path`` on ``branch``; nothing to delete is not an error (as in S3)."""
    with contextlib.suppress(ObjectNotFound):
        repo.delete(branch, path)


async def copy_object(call: Call) -> None:
    request = call.request
    repo = await call.repository(write=True)
    await call.run(writable, repo, request.ref)
    source_repo, source_ref, source_path = await copy_source(call)
    entry = await call.run(
        _stat, source_repo, source_ref, source_path, f"{source_ref}/{source_path}"
    )
    conditions.check_read(request, entry, prefix="x-amz-copy-source-if-")
    replace_metadata = (request.header("x-amz-metadata-directive") or "COPY").upper() == "REPLACE"
    same = (
        source_repo.name == repo.name and source_ref == request.ref and source_path == request.path
    )
    if same and not replace_metadata:
        raise S3Error(
            "InvalidRequest",
            "this copy request is illegal because it is trying to copy an object to itself "
            "without changing the object's metadata",
            400,
        )
    new = _copied_entry(call, entry, replace_metadata)
    copied = await call.run(_stage_copy, source_repo, repo, request.ref, new)
    result = document(
        "CopyObjectResult",
        [
            element("LastModified", timestamp(copied.mtime)),
            element("ETag", conditions.quoted(copied)),
        ],
    )
    await call.xml(result)


async def copy_source(call: Call) -> tuple[Repository, str, str]:
    """The repository, ref and path of ``x-amz-copy-source`` (readable by the caller)."""
    text = unquote(call.request.header("x-amz-copy-source") or "").split("?versionId=")[0]
    bucket, _, key = text.lstrip("/").partition("/")
    ref, _, path = key.partition("/")
    if not bucket or not ref or not path:
        raise S3Error("InvalidArgument", "x-amz-copy-source must be BUCKET/REF/PATH", 400)
    if call.principal is not None:
        call.principal.require_read(bucket)
    try:
        source = await call.run(call.repositories, bucket)
    except Exception:
        raise S3Error("NoSuchBucket", "the copy source bucket does not exist", 404) from None
    return source, ref, path


def _copied_entry(call: Call, entry: ObjectEntry, replace_metadata: bool) -> ObjectEntry:
    request = call.request
    now = datetime.now(UTC)
    if not replace_metadata:
        return replace(entry, path=request.path, mtime=now, etag=etag_of(entry))
    return replace(
        entry,
        path=request.path,
        mtime=now,
        content_type=content_type_of(request),
        metadata=request.user_metadata(),
        etag=etag_of(entry),
    )


def _stage_copy(
    source: Repository, dest: Repository, branch: str, entry: ObjectEntry
) -> ObjectEntry:
    """Stage ``entry`` (the source's, renamed) on ``branch`` of ``dest``: the same bytes
    within one namespace, a streamed copy otherwise."""
    if source.name == dest.name and not entry.external:
        dest.stage_entries(branch, [entry])
        return entry
    with source.open_entry(entry) as stream:
        return dest.put(
            branch, entry.path, stream, content_type=entry.content_type, metadata=entry.metadata
        )


class _BodyReader(io.RawIOBase):
    """A blocking file over a request body, for a worker thread. The body's pieces are
    gathered on the event loop in batches of at least :data:`STREAM_PIECE` bytes, the next
    batch while the thread hashes and writes this one; ``read`` hands out the pieces as
    they came (a short read when a piece is smaller than asked: no copying).
    :meth:`close` (from the loop) stops a gathering still running."""

    def __init__(self, body: Body) -> None:
        self._pieces = body.chunks()
        self._loop = asyncio.get_running_loop()
        self._next: concurrent.futures.Future[tuple[list[bytes], bool]] | None = None
        self._ready: collections.deque[bytes] = collections.deque()
        self._done = False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        while not self._ready and not self._done:
            self._take()
        if not self._ready:
            return b""
        if size < 0:
            out = b"".join(self._ready)
            self._ready.clear()
            return out
        piece = self._ready.popleft()
        if len(piece) > size:
            piece, rest = piece[:size], piece[size:]
            self._ready.appendleft(rest)
        return piece

    def close(self) -> None:
        if self._next is not None:
            self._next.cancel()
        super().close()

    def _take(self) -> None:
        """Wait for the next batch (from a worker thread); start gathering the one after."""
        if self._next is None:
            self._next = asyncio.run_coroutine_threadsafe(self._gather(), self._loop)
        batch, self._done = self._next.result()
        self._ready.extend(batch)
        self._next = None
        if not self._done:
            self._next = asyncio.run_coroutine_threadsafe(self._gather(), self._loop)

    async def _gather(self) -> tuple[list[bytes], bool]:
        """The next batch of pieces, and whether the body ended with it."""
        parts = []
        total = 0
        ended = False
        while total < STREAM_PIECE:
            try:
                piece = await self._pieces.__anext__()
            except StopAsyncIteration:
                ended = True
                break
            if piece:
                parts.append(piece)
                total += len(piece)
        return parts, ended


Handler = Callable[[Call], object]
