"""Object writes: PutObject, CopyObject, DeleteObject (reads are in :mod:`.object_reads`).

Keys are ``REF/PATH``. Reads take any ref expression; writes and deletes need a branch
(:func:`writable`): a tag, a commit or an expression answers MethodNotAllowed, a protected
branch AccessDenied. A PUT is answered once its object is durable and staged
(:func:`graveler.versioning.writes.put`); a copy within a repository stages the source's bytes under
the new path without copying them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from urllib.parse import unquote

from graveler.core.errors import BranchNotFound, InvalidRef, ObjectNotFound, RefNotFound
from graveler.repository import Repository
from graveler.server.bodies import ThreadBodyReader
from graveler.server.s3 import conditions
from graveler.server.s3.body import Body
from graveler.server.s3.call import Call
from graveler.server.s3.errors import S3Error, method_not_allowed
from graveler.server.s3.object_reads import STREAM_PIECE, entry_at
from graveler.server.s3.request import S3Request
from graveler.server.s3.xml import document, element, timestamp
from graveler.storage.entry import ObjectEntry, etag_of
from graveler.versioning.branches import writable_branch
from graveler.views.refexpr import parse_ref

#: What S3 stores for an object sent without a Content-Type.
DEFAULT_CONTENT_TYPE = "binary/octet-stream"
#: Bodies up to this size are read whole before one call into the engine.
SMALL_BODY = 1 << 20


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
        "metadata": request.stored_metadata(),
        "condition": conditions.write_condition(request),
        "verify": lambda e: body.check(e.etag, e.checksum),
    }
    declared = body.decoded_length
    if declared is not None and declared <= SMALL_BODY:
        data = await body.read_all(SMALL_BODY)
        return await call.run(repo.put, request.ref, request.path, data, **options)
    reader = body_reader(body)
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
        entry_at, source_repo, source_ref, source_path, f"{source_ref}/{source_path}"
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
        metadata=request.stored_metadata(),
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


def body_reader(body: Body) -> ThreadBodyReader:
    """A blocking file over ``body`` for a worker thread (see
    :class:`graveler.server.bodies.ThreadBodyReader`), gathered in batches of at least
    :data:`STREAM_PIECE` bytes."""
    pieces = body.chunks()

    async def gather() -> tuple[list[bytes], bool]:
        parts: list[bytes] = []
        total = 0
        while total < STREAM_PIECE:
            try:
                piece = await pieces.__anext__()
            except StopAsyncIteration:
                return parts, True
            if piece:
                parts.append(piece)
                total += len(piece)
        return parts, False

    return ThreadBodyReader(gather, asyncio.get_running_loop())


Handler = Callable[[Call], object]
