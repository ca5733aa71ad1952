"""Objects: upload, download (whole, a byte range, or a redirect to a presigned URL), head,
stat, list, delete (one or many), copy, and replacing an object's user metadata.

* An upload is ``application/octet-stream`` (the body is the object, its Content-Type the
  object's) or ``multipart/form-data`` with a ``content`` file (:mod:`.forms`); user metadata
  comes from ``X-Lakefs-Meta-*`` headers; ``If-None-Match: *`` writes only where there is no
  object yet and ``If-Match`` only over the object with that ETag (412 otherwise), checked
  in the staging transaction. ``storageClass`` is accepted and ignored. Bodies up to 1 MiB are
  read before the handler runs, larger ones streamed to the store.
* A download checks the bytes against the recorded size and SHA-256 when it serves the
  whole object (a large one breaks off when they do not match); a ``Range`` (one range, as in
  lakeFS and S3) is 206, an unsatisfiable one 416 with ``Content-Range: bytes */SIZE``.
* Deleting an object that is not there is a 204, as in lakeFS (the branch must exist and take
  writes).
* A copy within the repository stages the source's entry under the new path: the same
  bytes, not copied (objects imported from outside the namespace are copied). lakeFS's
  ``shallow`` copy is a 501, as lakeFS answers it.
* Listing pages are lakeFS's: objects and, with a delimiter, common prefixes in path order,
  ``after`` the last path of the previous page.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any, BinaryIO

from graveler.core import validate
from graveler.core.errors import (
    InvalidArgument,
    ObjectNotFound,
    PreconditionFailed,
    ProtectedBranch,
)
from graveler.repository import Repository
from graveler.server.lakefs import encode
from graveler.server.lakefs.errors import ApiError, bad_request, classify, not_implemented
from graveler.server.lakefs.forms import ContentPart, boundary_of
from graveler.server.lakefs.http import Call, Reply, json_reply, no_content
from graveler.server.lakefs.routing import Access, Body, Route, route
from graveler.server.lakefs.staging import presigned_read
from graveler.storage.entry import ObjectEntry, etag_of

OCTET_STREAM = "application/octet-stream"
META_HEADER = "x-lakefs-meta-"
#: Objects up to this size are read (and verified) whole before answering.
SMALL_OBJECT = 1 << 20
PIECE = 1 << 20
MAX_DELETE = 1000
#: lakeFS's OpenAPI pattern for Range (anything else is a 400 before the handler runs).
RANGE_PATTERN = re.compile(r"^bytes=((\d*-\d*,? ?)+)$")
#: Content types served inline (everything else as an attachment).
INLINE = ("image/", "text/plain", "application/json", "application/pdf")

Condition = Callable[[ObjectEntry | None], object]


def physical(call: Call, repo: Repository, entry: ObjectEntry) -> str:
    """The full URI of an entry's bytes, as clients see it."""
    if entry.external:
        return entry.physical_address
    return call.service.storage.address(repo.info.storage_namespace, entry.physical_address)


# --- upload ------------------------------------------------------------------------------------


def upload_object(call: Call) -> Reply:
    path = call.required("path")
    repo = call.repository()
    branch = call.params["branch"]
    repo.writable_branch(branch)
    condition = write_condition(call)
    content_type = call.header("content-type") or OCTET_STREAM
    boundary = boundary_of(content_type)
    data: BinaryIO | bytes
    if boundary is not None:
        form = ContentPart(call.stream(), boundary).start()
        content_type, data = form.content_type or OCTET_STREAM, form  # type: ignore[assignment]
    else:
        data = call.raw if call.raw is not None else call.stream()  # type: ignore[assignment]
    entry = repo.put(
        branch,
        path,
        data,
        content_type=content_type,
        metadata=header_metadata(call),
        condition=condition,
    )
    return json_reply(encode.object_stats(entry, physical(call, repo, entry)), 201)


def write_condition(call: Call) -> Condition | None:
    """The precondition of ``If-None-Match: *`` or ``If-Match: ETAG``."""
    none_match, match = call.header("if-none-match"), call.header("if-match")
    if none_match is not None:
        if none_match.strip() != "*":
            raise bad_request("If-None-Match supports '*' only")
        return _absent
    if match is not None:
        expected = match.strip().strip('"')

        def same(current: ObjectEntry | None) -> None:
            if current is None or etag_of(current) != expected:
                raise PreconditionFailed(f"the object does not have ETag {match!r}")

        return same
    return None


def _absent(current: ObjectEntry | None) -> None:
    if current is not None:
        raise PreconditionFailed("path already exists")


def header_metadata(call: Call) -> dict[str, str]:
    """User metadata from ``X-Lakefs-Meta-KEY: VALUE`` headers (keys lower-cased)."""
    found = {}
    for name, value in call.headers.items():
        if name.startswith(META_HEADER) and len(name) > len(META_HEADER):
            found[name[len(META_HEADER) :]] = value.encode("latin-1").decode("utf-8", "replace")
    return found


def upload_preflight(call: Call) -> Reply:
    call.required("path")
    call.repository().writable_branch(call.params["branch"])
    return no_content()


# --- download ----------------------------------------------------------------------------------


def get_object(call: Call) -> Reply:
    repo = call.repository()
    entry = repo.stat(call.params["ref"], call.required("path"))
    etag = f'"{etag_of(entry)}"'
    if call.header("if-none-match") == etag:
        return Reply(304, b"", None, [("ETag", etag)])
    if call.flag("presign"):
        url, _ = presigned_read(repo, entry)
        return Reply(302, b"", None, [("Location", url)])
    headers = object_headers(entry, etag)
    headers.append(("Content-Disposition", _disposition(entry.content_type)))
    span = byte_range(call, entry, headers)
    if span is not None:
        start, end = span
        headers.append(("Content-Range", f"bytes {start}-{end}/{entry.size}"))
        return Reply(206, _read_range(repo, entry, start, end), entry.content_type, headers)
    if entry.size <= SMALL_OBJECT:
        return Reply(200, repo.read_entry(entry), entry.content_type, headers)
    stream = repo.open_entry(entry)
    return Reply(
        200,
        content_type=entry.content_type,
        headers=headers,
        stream=_pieces(stream),
        length=entry.size,
        close=stream.close,
    )


def head_object(call: Call) -> Reply:
    repo = call.repository()
    entry = repo.stat(call.params["ref"], call.required("path"))
    headers = object_headers(entry, f'"{etag_of(entry)}"')
    span = byte_range(call, entry, headers)
    if span is None:
        return Reply(200, b"", entry.content_type, headers, length=entry.size)
    start, end = span
    headers.append(("Content-Range", f"bytes {start}-{end}/{entry.size}"))
    return Reply(206, b"", entry.content_type, headers, length=end - start + 1)


def object_headers(entry: ObjectEntry, etag: str) -> list[tuple[str, str]]:
    return [
        ("ETag", etag),
        ("Last-Modified", format_datetime(entry.mtime.astimezone(UTC), usegmt=True)),
        ("Accept-Ranges", "bytes"),
        ("Cache-Control", "no-store, must-revalidate"),
        ("Expires", "0"),
    ]


def _disposition(content_type: str) -> str:
    return "inline" if content_type.startswith(INLINE) else "attachment"


def byte_range(
    call: Call, entry: ObjectEntry, headers: list[tuple[str, str]]
) -> tuple[int, int] | None:
    """The (first, last) byte a ``Range`` header asks for; 400 for one that breaks the
    header's syntax, 416 for one the object cannot satisfy (lakeFS's rules)."""
    spec = call.header("range")
    if spec is None:
        return None
    if not RANGE_PATTERN.match(spec):
        raise bad_request(f"invalid Range header {spec[:60]!r}")
    found = parse_range(spec, entry.size)
    if found is None:
        unsatisfiable = [*headers, ("Content-Range", f"bytes */{entry.size}")]
        raise ApiError(416, "Requested Range Not Satisfiable", unsatisfiable)
    return found


def parse_range(spec: str, size: int) -> tuple[int, int] | None:
    """A single ``bytes=`` range of an object of ``size`` bytes, None when it cannot be
    satisfied (several ranges, a reversed one, one past the end)."""
    text = spec[len("bytes=") :]
    first, sep, last = text.partition("-")
    first, last = first.strip(), last.strip()
    if "," in text or not sep or (not first and not last):
        return None
    if not first:
        suffix = int(last)
        return (max(0, size - suffix), size - 1) if suffix > 0 and size > 0 else None
    start = int(first)
    end = size - 1 if not last else min(int(last), size - 1)
    if last and int(last) < start:
        return None
    if start > size - 1:
        return None
    return start, end


def _read_range(repo: Repository, entry: ObjectEntry, start: int, end: int) -> bytes:
    length = end - start + 1
    if not entry.external:
        return repo.store.read_range(entry.physical_address, start, length)
    with repo.open_entry(entry) as stream:
        remaining = start
        while remaining:
            skipped = stream.read(min(remaining, PIECE))
            if not skipped:
                return b""
            remaining -= len(skipped)
        return stream.read(length)


def _pieces(stream: BinaryIO) -> Iterator[bytes]:
    while piece := stream.read(PIECE):
        yield piece


# --- stat and list -----------------------------------------------------------------------------


def stat_object(call: Call) -> Reply:
    repo = call.repository()
    entry = repo.stat(call.params["ref"], call.required("path"))
    stats = _stats_of(call, repo, call.flag("user_metadata", True))
    return json_reply(stats(entry))


def _stats_of(
    call: Call, repo: Repository, metadata: bool
) -> Callable[[ObjectEntry], dict[str, Any]]:
    """How this call shows an entry (the query read once, for a whole listing)."""
    if call.flag("presign"):

        def presigned(entry: ObjectEntry) -> dict[str, Any]:
            url, expiry = presigned_read(repo, entry)
            return encode.object_stats(entry, url, metadata=metadata, expiry=expiry)

        return presigned
    base = call.service.storage.address(repo.info.storage_namespace, "")

    def stored(entry: ObjectEntry) -> dict[str, Any]:
        where = entry.physical_address if entry.external else base + entry.physical_address
        return encode.object_stats(entry, where, metadata=metadata)

    return stored


def list_objects(call: Call) -> Reply:
    repo = call.repository()
    page = repo.list(
        call.params["ref"],
        call.arg("prefix") or "",
        delimiter=call.arg("delimiter") or None,
        after=call.arg("after") or "",
        amount=call.amount(),
    )
    metadata = call.flag("user_metadata", True)
    stats = _stats_of(call, repo, metadata)
    rows: list[dict[str, Any]] = [stats(e) for e in page.objects]
    if not metadata:
        for doc in rows:
            del doc["metadata"]
    if page.common_prefixes:
        rows += [encode.common_prefix(p) for p in page.common_prefixes]
        rows.sort(key=lambda doc: str(doc["path"]))
    return json_reply(encode.page(rows, page.next_after))


def underlying_properties(call: Call) -> Reply:
    call.repository().stat(call.params["ref"], call.required("path"))
    return json_reply({"storage_class": None})


# --- delete, copy, metadata --------------------------------------------------------------------


def delete_object(call: Call) -> Reply:
    """204 whether or not the object was there (lakeFS deletes idempotently); 404 for a
    missing branch, 403 for one that takes no writes."""
    repo, branch = call.repository(), call.params["branch"]
    try:
        repo.delete(branch, call.required("path"))
    except ObjectNotFound:
        repo.writable_branch(branch)
    return no_content()


def delete_objects(call: Call) -> Reply:
    paths = call.json().get("paths")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise bad_request("paths must be a list of strings")
    if len(paths) > MAX_DELETE:
        raise bad_request(f"request size exceeded, max paths is set to {MAX_DELETE}")
    repo = call.repository()
    branch = call.params["branch"]
    errors, valid = [], []
    for path in paths:
        if not path:
            continue  # lakeFS ignores an empty path (Spark deletes "main/")
        try:
            validate.object_key(path)
            valid.append(path)
        except InvalidArgument as exc:
            errors.append({"path": path, "status_code": 400, "message": str(exc)})
    try:
        repo.delete_many(branch, valid)
    except ProtectedBranch as exc:
        status, message = classify(exc)
        errors += [{"path": p, "status_code": status, "message": message} for p in valid]
    return json_reply({"errors": errors})


def copy_object(call: Call) -> Reply:
    dest = call.required("dest_path")
    doc = call.json()
    source = doc.get("src_path")
    src_ref = doc.get("src_ref") or call.params["branch"]
    if not isinstance(source, str) or not source or not isinstance(src_ref, str):
        raise bad_request("src_path is required")
    if doc.get("shallow"):
        raise not_implemented("shallow copies (graveler's copies already share the bytes)")
    repo = call.repository()
    branch = call.params["branch"]
    repo.writable_branch(branch)
    entry = repo.stat(src_ref, source)
    copied = replace(entry, path=dest, mtime=datetime.now(UTC), etag=etag_of(entry))
    if entry.external:
        with repo.open_entry(entry) as stream:
            copied = repo.put(
                branch, dest, stream, content_type=entry.content_type, metadata=entry.metadata
            )
    else:
        repo.stage_entries(branch, [copied])
    return json_reply(encode.object_stats(copied, physical(call, repo, copied)), 201)


def update_user_metadata(call: Call) -> Reply:
    path = call.required("path")
    values = call.json().get("set")
    metadata = encode.metadata_of(values, "set")
    if values is None:
        raise bad_request("set is required")
    repo = call.repository()
    branch = call.params["branch"]
    entry = repo.stat(branch, path)
    repo.stage_entries(branch, [replace(entry, metadata=metadata)])
    return Reply(201, b"", None)


_B = "/repositories/{repository}/branches/{branch}/objects"
_R = "/repositories/{repository}/refs/{ref}/objects"
ROUTES: list[Route] = [
    route("POST", _B, upload_object, Access.WRITE, Body.UPLOAD),
    route("GET", _B + "/stage_allowed", upload_preflight, Access.WRITE),
    route("DELETE", _B, delete_object, Access.WRITE),
    route("POST", _B + "/delete", delete_objects, Access.WRITE, Body.JSON),
    route("POST", _B + "/copy", copy_object, Access.WRITE, Body.JSON),
    route("PUT", _B + "/stat/user_metadata", update_user_metadata, Access.WRITE, Body.JSON),
    route("GET", _R, get_object),
    route("HEAD", _R, head_object),
    route("GET", _R + "/stat", stat_object),
    route("GET", _R + "/ls", list_objects),
    route("GET", _R + "/underlyingProperties", underlying_properties),
]
