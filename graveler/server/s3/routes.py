"""Which S3 operation a request is, and its handler: S3's REST API by method, whether a
bucket and a key are named, and the sub-resource in the query (``?uploads``, ``?uploadId``,
``?delete``...). Operations are named as S3 names them (``GetObject``, ``UploadPart``...),
for the access log.

S3 object versioning and object lock are not graveler's: branches, commits and tags keep a
repository's history. ``PutBucketVersioning``, ``ListObjectVersions`` and the object-lock
calls answer ``NotImplemented`` saying so; a ``versionId`` other than ``null`` (the one
version of an object in a bucket without versioning) is ``InvalidArgument``, as S3 answers
it for such a bucket.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from graveler.server.s3 import acl, buckets, listing, object_reads, objects, uploads
from graveler.server.s3.call import Call
from graveler.server.s3.errors import S3Error, method_not_allowed, not_implemented
from graveler.server.s3.request import S3Request

Handler = Callable[[Call], Awaitable[None]]
Route = tuple[str, Handler]
HISTORY = (
    "graveler keeps no S3 object versions and no object locks: a repository's history is its "
    "commits. Read an earlier state at a commit ID or a tag (s3://REPO/COMMIT/PATH), "
    "write on a branch and commit, and tag a commit to keep it"
)
#: Sub-resources graveler does not serve (NotImplemented).
UNSUPPORTED = frozenset(
    {
        "policy",
        "tagging",
        "lifecycle",
        "cors",
        "website",
        "replication",
        "encryption",
        "torrent",
        "notification",
        "logging",
        "accelerate",
        "requestPayment",
        "ownershipControls",
        "publicAccessBlock",
        "intelligent-tiering",
        "inventory",
        "metrics",
        "analytics",
        "restore",
        "select",
    }
)
#: Sub-resources of S3's versioning and object lock (NotImplemented, pointing to history).
VERSIONED = frozenset({"versions", "object-lock", "retention", "legal-hold"})


def route(request: S3Request, namespace_root: str | None) -> Route:
    """(operation, handler) of ``request``; MethodNotAllowed or NotImplemented when S3 has
    no such call or graveler does not serve it."""
    method, query = request.method, request.query
    _refuse_unserved(request)
    if request.bucket is None:
        if method == "GET":
            return "ListBuckets", buckets.list_buckets
        raise method_not_allowed(f"{method} is not allowed on the service")
    if request.key is None:
        return _bucket_route(method, query, namespace_root)
    return _object_route(request)


def _refuse_unserved(request: S3Request) -> None:
    names = request.query.keys()
    versioned = sorted(VERSIONED & names)
    if versioned or (request.method == "PUT" and "versioning" in names):
        what = versioned[0] if versioned else "versioning"
        raise S3Error("NotImplemented", f"{request.method} ?{what}: {HISTORY}", 501)
    if request.query.get("versionId", "null") != "null":
        raise S3Error("InvalidArgument", f"invalid version ID: {HISTORY}", 400)
    unsupported = sorted(UNSUPPORTED & names)
    if unsupported:
        raise not_implemented(f"{request.method} ?{unsupported[0]}")
    if "acl" in names and request.method not in ("GET", "PUT"):
        raise method_not_allowed(f"{request.method} is not allowed on an ACL")


def _bucket_route(method: str, query: dict[str, str], namespace_root: str | None) -> Route:
    if method == "GET":
        for sub, found in _BUCKET_GETS.items():
            if sub in query:
                return found
        return ("ListObjectsV2" if query.get("list-type") == "2" else "ListObjects"), (
            listing.list_objects
        )
    if method == "HEAD":
        return "HeadBucket", buckets.head_bucket
    if method == "PUT" and "acl" in query:
        return "PutBucketAcl", acl.put_bucket_acl
    if method == "PUT" and not query:
        return "CreateBucket", lambda call: buckets.create_bucket(call, namespace_root)
    if method == "POST" and "delete" in query:
        return "DeleteObjects", buckets.delete_objects
    if method == "DELETE" and not query:
        return "DeleteBucket", buckets.delete_bucket
    raise not_implemented(f"{method} on a bucket with {sorted(query)}")


def _object_route(request: S3Request) -> Route:
    method, query = request.method, request.query
    if method == "GET":
        if "uploadId" in query:
            return "ListParts", uploads.list_parts
        if "attributes" in query:
            return "GetObjectAttributes", object_reads.get_object_attributes
        if "acl" in query:
            return "GetObjectAcl", acl.object_acl
        return "GetObject", object_reads.get_object
    if method == "HEAD":
        return "HeadObject", _head_object
    if method == "PUT":
        return _put_route(request)
    if method == "POST":
        if "uploads" in query:
            return "CreateMultipartUpload", uploads.create_upload
        if "uploadId" in query:
            return "CompleteMultipartUpload", uploads.complete_upload
    if method == "DELETE":
        if "uploadId" in query:
            return "AbortMultipartUpload", uploads.abort_upload
        return "DeleteObject", objects.delete_object
    raise method_not_allowed(f"{method} is not allowed on an object")


def _put_route(request: S3Request) -> Route:
    copy = request.header("x-amz-copy-source") is not None
    if "acl" in request.query:
        return "PutObjectAcl", acl.put_object_acl
    if "uploadId" in request.query and "partNumber" in request.query:
        return ("UploadPartCopy" if copy else "UploadPart"), uploads.upload_part
    return ("CopyObject" if copy else "PutObject"), objects.put_object


async def _head_object(call: Call) -> None:
    await object_reads.get_object(call, head=True)


_BUCKET_GETS: dict[str, Route] = {
    "uploads": ("ListMultipartUploads", uploads.list_uploads),
    "location": ("GetBucketLocation", buckets.bucket_location),
    "versioning": ("GetBucketVersioning", buckets.bucket_versioning),
    "acl": ("GetBucketAcl", acl.bucket_acl),
}
