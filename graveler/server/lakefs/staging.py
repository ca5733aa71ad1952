"""Direct data access: clients write bytes to the storage namespace themselves and then link
them (the lakeFS Hadoop FileSystem, the Python SDK's writers), or read them through
presigned URLs.

* ``GET .../staging/backing`` hands out a fresh physical address in the repository's
  namespace (with ``presign=true``, on an S3 namespace, a presigned PUT URL for it);
* ``PUT .../staging/backing`` links an address at a path: the engine's ``link`` check
  applies (the address must lie inside the repository's namespace, outside graveler's own
  metadata), and the object's size and SHA-256 are read from the store (the client's
  ``checksum``, lakeFS's ETag, is kept as the object's ETag); without a ``content_type`` the
  object is ``application/octet-stream``, as in lakeFS;
* presigned multipart uploads (``staging/pmpu``) on S3 namespaces: the upload is created
  in the namespace, clients PUT the parts to presigned URLs, completing it links the object.
  On other namespaces they answer 501, as lakeFS does where its ``config`` says
  ``pre_sign_multipart_upload: false``. An empty ``path`` or physical address is a 400.

Presigned URLs last :data:`PRESIGN_SECONDS` and are signed with the server's own S3
credentials; on a local namespace asking for one is a 400 (lakeFS's answer on its local
blockstore).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import replace
from typing import Any

from graveler.core.errors import InvalidArgument, ObjectNotFound, PreconditionFailed
from graveler.repository import Repository
from graveler.server.lakefs import encode
from graveler.server.lakefs.errors import bad_request, not_implemented
from graveler.server.lakefs.http import Call, Reply, json_reply, no_content
from graveler.server.lakefs.routing import Access, Body, Route, route
from graveler.storage.entry import DEFAULT_CONTENT_TYPE, ObjectEntry, etag_of
from graveler.storage.objects import new_physical_address, normalize_address
from graveler.storage.objectstore import ObjectStore

PRESIGN_SECONDS = 900
MAX_PARTS = 10_000


# --- presigned URLs ----------------------------------------------------------------------------


def presigned_read(repo: Repository, entry: ObjectEntry) -> tuple[str, int]:
    """A presigned GET URL of ``entry``'s bytes and when it expires (Unix seconds)."""
    if entry.external:
        store, key = repo.external.locate(entry.physical_address)
    else:
        store, key = repo.store, entry.physical_address
    return _signer(store)(key), int(time.time()) + PRESIGN_SECONDS


def _signer(store: ObjectStore) -> Any:
    presign = getattr(store, "presign", None)
    if presign is None:
        raise bad_request(
            "presigned URLs are offered on S3 namespaces only; read through the API instead"
        )
    return presign


def _s3(repo: Repository) -> Any:
    """The repository's store, when it offers presigned multipart uploads (501 otherwise)."""
    if not hasattr(repo.store, "create_multipart"):
        raise not_implemented("presign multipart upload API (S3 namespaces only)")
    return repo.store


# --- physical addresses ------------------------------------------------------------------------


def get_physical_address(call: Call) -> Reply:
    call.required("path")
    repo = call.repository()
    address = new_physical_address()
    doc: dict[str, Any] = {
        "physical_address": call.service.storage.address(repo.info.storage_namespace, address)
    }
    if call.flag("presign"):
        doc["presigned_url"] = _signer(repo.store)(address, write=True)
        doc["presigned_url_expiry"] = int(time.time()) + PRESIGN_SECONDS
    return json_reply(doc)


def link_physical_address(call: Call) -> Reply:
    path = call.required("path")
    doc = call.json()
    staging = doc.get("staging")
    given = staging.get("physical_address") if isinstance(staging, dict) else None
    checksum = doc.get("checksum")
    if not isinstance(given, str) or not given:
        raise bad_request("staging.physical_address is required")
    if not isinstance(checksum, str) or not checksum.strip(' "'):
        raise bad_request("checksum is required")
    repo = call.repository()
    branch = call.params["branch"]
    _check_conditions(call, repo, branch, path)
    entry = _linked(call, repo, path, given, checksum.strip(' "'), doc)
    repo.stage_entries(branch, [entry])
    shown = call.service.storage.address(repo.info.storage_namespace, entry.physical_address)
    return json_reply(encode.object_stats(entry, shown))


def stage_object(call: Call) -> Reply:
    """lakeFS's older ``PUT .../objects`` (stageObject): link, with the fields flat."""
    doc = call.json()
    path = call.required("path")
    given, checksum = doc.get("physical_address"), doc.get("checksum")
    if not isinstance(given, str) or not given or not isinstance(checksum, str):
        raise bad_request("physical_address and checksum are required")
    repo = call.repository()
    fields = {**doc, "user_metadata": doc.get("metadata")}
    entry = _linked(call, repo, path, given, checksum.strip(' "'), fields)
    repo.stage_entries(call.params["branch"], [entry])
    shown = call.service.storage.address(repo.info.storage_namespace, entry.physical_address)
    return json_reply(encode.object_stats(entry, shown), 201)


def _linked(
    call: Call, repo: Repository, path: str, given: str, etag: str, doc: dict[str, Any]
) -> ObjectEntry:
    """The entry linking ``given`` at ``path`` (the address checked by the engine)."""
    namespace = repo.info.storage_namespace
    address = call.service.storage.linkable(namespace, given)
    content_type = doc.get("content_type")
    if content_type is not None and not isinstance(content_type, str):
        raise bad_request("content_type must be a string")
    metadata = encode.metadata_of(doc.get("user_metadata"), "user_metadata")
    try:
        entry = repo.make_linked_entry(
            path, address, content_type=content_type or DEFAULT_CONTENT_TYPE, metadata=metadata
        )
    except ObjectNotFound:
        raise bad_request(
            f"nothing was written at {given!r}: write the object, then link it"
        ) from None
    return replace(entry, etag=etag)


def _check_conditions(call: Call, repo: Repository, branch: str, path: str) -> None:
    """``If-None-Match: *`` and ``If-Match: ETAG`` against the object at ``path`` now."""
    none_match, match = call.header("if-none-match"), call.header("if-match")
    if none_match is None and match is None:
        return
    if none_match is not None and none_match.strip() != "*":
        raise bad_request("If-None-Match supports '*' only")
    try:
        current: ObjectEntry | None = repo.stat(branch, path)
    except ObjectNotFound:
        current = None
    if none_match is not None and current is not None:
        raise PreconditionFailed(f"an object already exists at {path!r}")
    if match is not None and (current is None or etag_of(current) != match.strip(' "')):
        raise PreconditionFailed(f"the object at {path!r} does not have ETag {match!r}")


# --- presigned multipart uploads ---------------------------------------------------------------


def create_multipart(call: Call) -> Reply:
    _path(call)
    repo = call.repository()
    store = _s3(repo)
    repo.branch(call.params["branch"])
    parts = _parts(call.arg("parts"))
    address = new_physical_address()
    upload_id = store.create_multipart(address)
    urls = [store.presign_part(address, upload_id, n + 1) for n in range(parts)]
    doc: dict[str, Any] = {
        "upload_id": upload_id,
        "physical_address": call.service.storage.address(repo.info.storage_namespace, address),
    }
    if urls:
        doc["presigned_urls"] = urls
    return json_reply(doc, 201)


def _path(call: Call) -> str:
    """The object's path: required, and not empty (400)."""
    path = call.required("path")
    if not path:
        raise bad_request("path is required")
    return path


def _parts(value: str | None) -> int:
    if value is None or value == "":
        return 0
    if not value.isdigit() or int(value) > MAX_PARTS:
        raise bad_request(f"parts can be between 0 and {MAX_PARTS}")
    return int(value)


def upload_part(call: Call) -> Reply:
    _path(call)
    repo = call.repository()
    store = _s3(repo)
    address = _relative(call, repo, call.json().get("physical_address"))
    number = call.params["partNumber"]
    if not number.isdigit() or not 1 <= int(number) <= MAX_PARTS:
        raise bad_request(f"a part number is between 1 and {MAX_PARTS}")
    url = store.presign_part(address, call.params["uploadId"], int(number))
    return json_reply({"presigned_url": url})


def complete_multipart(call: Call) -> Reply:
    path = _path(call)
    repo = call.repository()
    store = _s3(repo)
    doc = call.json()
    address = _relative(call, repo, doc.get("physical_address"))
    parts = _part_list(doc.get("parts"))
    store.complete_multipart(address, call.params["uploadId"], parts)
    etag = _multipart_etag([e for _, e in parts])
    entry = _linked(call, repo, path, address, etag, doc)
    repo.stage_entries(call.params["branch"], [entry])
    shown = call.service.storage.address(repo.info.storage_namespace, entry.physical_address)
    return json_reply(encode.object_stats(entry, shown))


def abort_multipart(call: Call) -> Reply:
    _path(call)
    repo = call.repository()
    store = _s3(repo)
    address = _relative(call, repo, call.json().get("physical_address"))
    store.abort_multipart(address, call.params["uploadId"])
    return no_content()


def upload_part_copy(call: Call) -> Reply:
    _s3(call.repository())
    raise not_implemented("copying a part from another object (uploadPartCopy)")


def _relative(call: Call, repo: Repository, given: object) -> str:
    """A physical address a client sent back, relative to the repository's namespace."""
    if not isinstance(given, str) or not given:
        raise bad_request("physical_address is required")
    namespace = repo.info.storage_namespace
    try:
        return normalize_address(namespace, call.service.storage.linkable(namespace, given))
    except InvalidArgument as exc:
        raise bad_request(
            f"physical address must be relative to the storage namespace: {exc}"
        ) from None


def _part_list(value: object) -> list[tuple[int, str]]:
    if not isinstance(value, list) or not value:
        raise bad_request("parts are required")
    out = []
    for part in value:
        number = part.get("part_number") if isinstance(part, dict) else None
        etag = part.get("etag") if isinstance(part, dict) else None
        if not isinstance(number, int) or not isinstance(etag, str):
            raise bad_request("each part is {'part_number': N, 'etag': 'ETAG'}")
        out.append((number, etag))
    return out


def _multipart_etag(etags: list[str]) -> str:
    """S3's ETag of an object assembled from parts: the MD5 of the parts' MD5s, ``-N``."""
    try:
        joined = b"".join(bytes.fromhex(e.strip('"')) for e in etags)
    except ValueError:
        return ""
    return f"{hashlib.md5(joined).hexdigest()}-{len(etags)}"


_S = "/repositories/{repository}/branches/{branch}/staging"
ROUTES: list[Route] = [
    route("GET", _S + "/backing", get_physical_address, Access.WRITE),
    route("PUT", _S + "/backing", link_physical_address, Access.WRITE, Body.JSON),
    route(
        "PUT",
        "/repositories/{repository}/branches/{branch}/objects",
        stage_object,
        Access.WRITE,
        Body.JSON,
    ),
    route("POST", _S + "/pmpu", create_multipart, Access.WRITE),
    route("PUT", _S + "/pmpu/{uploadId}", complete_multipart, Access.WRITE, Body.JSON),
    route("DELETE", _S + "/pmpu/{uploadId}", abort_multipart, Access.WRITE, Body.JSON),
    route("PUT", _S + "/pmpu/{uploadId}/parts/{partNumber}", upload_part, Access.WRITE, Body.JSON),
    route(
        "PUT",
        _S + "/pmpu/{uploadId}/parts/{partNumber}/copy",
        upload_part_copy,
        Access.WRITE,
        Body.JSON,
    ),
]
