"""The S3 gateway as an ASGI application: authenticate, route, answer (errors as S3's XML).

Every request must be signed (AWS Signature V4, header or presigned query) by a known access
key; an unsigned one is refused with AccessDenied. Routing follows S3's REST API by method,
whether a bucket and a key are named, and the sub-resource in the query (``?uploads``,
``?uploadId``, ``?delete``...).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from graveler.client import Graveler
from graveler.core.errors import AuthenticationFailed, CorruptFile, GravelerError, StorageError
from graveler.repository import Repository
from graveler.server import sigv4
from graveler.server.auth import Authenticator
from graveler.server.s3 import buckets, listing, object_reads, objects, uploads
from graveler.server.s3.body import ClientGone, Receive
from graveler.server.s3.call import Call, Send
from graveler.server.s3.errors import S3Error, method_not_allowed, not_implemented
from graveler.server.s3.request import S3Request

log = logging.getLogger("graveler.gateway")
Handler = Callable[[Call], Awaitable[None]]
SIGV2_ONLY = (
    "this endpoint takes AWS Signature Version 4 only (boto3: "
    "Config(signature_version='s3v4'); the aws CLI: s3.signature_version = s3v4)"
)
#: How long a repository handle is reused (repositories change rarely).
REPOSITORY_SECONDS = 5.0


class Gateway:
    """The S3 API over ``client`` (see the module docstring). ``region`` is what the gateway
    reports as its location; ``domain`` enables virtual-host style addressing
    (``REPO.DOMAIN``); ``namespace_root`` is where CreateBucket puts new repositories;
    ``verify_reads``: streamed GETs are hashed on the server (see :mod:`.object_reads`)."""

    def __init__(
        self,
        client: Graveler,
        authenticator: Authenticator,
        *,
        region: str = "us-east-1",
        domain: str | None = None,
        namespace_root: str | None = None,
        verify_reads: bool = False,
    ) -> None:
        self.client = client
        self.verify_reads = verify_reads
        self.auth = authenticator
        self.region = region
        self.domain = domain
        self.namespace_root = namespace_root
        self._repos: dict[str, tuple[float, Repository]] = {}
        self._repos_lock = threading.Lock()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        call: Call | None = None
        try:
            request = S3Request.from_scope(scope, self.domain)
            request.request_id = os.urandom(8).hex().upper()
            call = Call(
                request, receive, send, self.client, None, None, self.repository, self.region
            )
            call.verify_reads = self.verify_reads
            self._authenticate(call)
            await self._route(call)(call)
        except ClientGone:
            log.info("client went away during %s", scope.get("path"))
        except Exception as exc:  # every failure becomes S3's error answer
            await self._fail(scope, send, call, exc)

    def repository(self, name: str) -> Repository:
        """A handle on repository ``name`` (reused for a few seconds)."""
        now = time.monotonic()
        with self._repos_lock:
            hit = self._repos.get(name)
        if hit is not None and now - hit[0] < REPOSITORY_SECONDS:
            return hit[1]
        repo = self.client.repository(name)
        with self._repos_lock:
            self._repos[name] = (now, repo)
        return repo

    def _authenticate(self, call: Call) -> None:
        request = call.request
        signature = sigv4.parse(request.signed, request.query)
        if signature is None:
            if "AWSAccessKeyId" in request.query:
                raise S3Error("AccessDenied", SIGV2_ONLY, 403)
            raise S3Error("AccessDenied", "anonymous access is not allowed: sign requests", 403)
        try:
            principal, secret = self.auth.lookup(signature.access_key_id)
        except AuthenticationFailed:
            raise S3Error(
                "InvalidAccessKeyId",
                "the AWS access key ID you provided does not exist in our records",
                403,
            ) from None
        call.verified = sigv4.verify(request.signed, signature, secret)
        call.principal = principal
        request.caller = principal.access_key_id

    def _route(self, call: Call) -> Handler:
        request = call.request
        method, query = request.method, request.query
        if request.bucket is None:
            if method == "GET":
                return buckets.list_buckets
            raise method_not_allowed(f"{method} is not allowed on the service")
        if request.key is None:
            return self._bucket_route(method, query)
        return _object_route(method, query)

    def _bucket_route(self, method: str, query: dict[str, str]) -> Handler:
        if method == "GET":
            for sub, handler in _BUCKET_GETS.items():
                if sub in query:
                    return handler
            if _UNSUPPORTED & query.keys():
                raise not_implemented(f"GET ?{sorted(_UNSUPPORTED & query.keys())[0]}")
            return listing.list_objects
        if method == "HEAD":
            return buckets.head_bucket
        if method == "PUT" and not query:
            root = self.namespace_root
            return lambda call: buckets.create_bucket(call, root)
        if method == "POST" and "delete" in query:
            return buckets.delete_objects
        if method == "DELETE" and not query:
            return buckets.delete_bucket
        raise not_implemented(f"{method} on a bucket with {sorted(query)}")

    async def _fail(
        self, scope: dict[str, Any], send: Send, call: Call | None, exc: Exception
    ) -> None:
        if not isinstance(exc, S3Error | sigv4.SignatureError) and not _expected(exc):
            log.exception("S3 %s %s failed", scope.get("method"), scope.get("path"))
        if call is None:
            call = Call(
                _bare(scope), _no_body, send, self.client, None, None, self.repository, self.region
            )
        if call.started:
            raise exc  # the answer is on its way: only dropping the connection tells the client
        await call.error(exc)


def _object_route(method: str, query: dict[str, str]) -> Handler:
    if method == "GET":
        if "uploadId" in query:
            return uploads.list_parts
        if "attributes" in query:
            return object_reads.get_object_attributes
        if _UNSUPPORTED & query.keys():
            raise not_implemented(f"GET ?{sorted(_UNSUPPORTED & query.keys())[0]}")
        return object_reads.get_object
    if method == "HEAD":
        return _head_object
    if method == "PUT":
        if "uploadId" in query and "partNumber" in query:
            return uploads.upload_part
        if _UNSUPPORTED & query.keys():
            raise not_implemented(f"PUT ?{sorted(_UNSUPPORTED & query.keys())[0]}")
        return objects.put_object
    if method == "POST":
        if "uploads" in query:
            return uploads.create_upload
        if "uploadId" in query:
            return uploads.complete_upload
    if method == "DELETE":
        return uploads.abort_upload if "uploadId" in query else objects.delete_object
    raise method_not_allowed(f"{method} is not allowed on an object")


async def _head_object(call: Call) -> None:
    await object_reads.get_object(call, head=True)


_BUCKET_GETS: dict[str, Handler] = {
    "uploads": uploads.list_uploads,
    "location": buckets.bucket_location,
    "versioning": buckets.bucket_versioning,
}
_UNSUPPORTED = {
    "acl",
    "policy",
    "tagging",
    "lifecycle",
    "cors",
    "website",
    "replication",
    "encryption",
    "object-lock",
    "retention",
    "legal-hold",
    "torrent",
    "versions",
}


def _expected(exc: Exception) -> bool:
    """Errors that are the caller's (logged only at INFO): graveler's own, but for a store or
    a file failing."""
    return isinstance(exc, GravelerError) and not isinstance(exc, StorageError | CorruptFile)


def _bare(scope: dict[str, Any]) -> S3Request:
    return S3Request(scope.get("method", "GET"), b"/", b"", [], {}, None, None)


async def _no_body() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}
