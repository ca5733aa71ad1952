"""The S3 gateway as an ASGI application: authenticate, route, answer (errors as S3's XML).

Every request must be signed by a known access key: AWS Signature Version 4 (header or
presigned query) or Version 2 (``Authorization: AWS ...`` or ``AWSAccessKeyId`` in the
query); an unsigned one is refused with AccessDenied. Routing is :mod:`.routes`.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from graveler.client import Graveler
from graveler.core.errors import AuthenticationFailed, CorruptFile, GravelerError, StorageError
from graveler.repository import Repository
from graveler.server import sigv2, sigv4
from graveler.server.auth import Authenticator, Principal
from graveler.server.observe import new_request_id, note, request_id
from graveler.server.s3 import routes
from graveler.server.s3.body import ClientGone, Receive
from graveler.server.s3.call import Call, Send
from graveler.server.s3.errors import S3Error
from graveler.server.s3.request import S3Request

log = logging.getLogger("graveler.gateway")
#: How long a repository handle is reused (repositories change rarely).
REPOSITORY_SECONDS = 5.0
#: How long a request body may stall before the request is answered RequestTimeout.
BODY_TIMEOUT = 20.0


class Gateway:
    """The S3 API over ``client`` (see the module docstring). ``region`` is what the gateway
    reports as its location; ``domain`` enables virtual-host style addressing
    (``REPO.DOMAIN``); ``namespace_root`` is where CreateBucket puts new repositories;
    ``verify_reads``: streamed GETs are hashed on the server (see :mod:`.object_reads`);
    ``body_timeout``: seconds a request body may stall."""

    def __init__(
        self,
        client: Graveler,
        authenticator: Authenticator,
        *,
        region: str = "us-east-1",
        domain: str | None = None,
        namespace_root: str | None = None,
        verify_reads: bool = False,
        body_timeout: float = BODY_TIMEOUT,
    ) -> None:
        self.client = client
        self.verify_reads = verify_reads
        self.auth = authenticator
        self.region = region
        self.domain = domain
        self.namespace_root = namespace_root
        self.body_timeout = body_timeout
        self._repos: dict[str, tuple[float, Repository]] = {}
        self._repos_lock = threading.Lock()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        call: Call | None = None
        try:
            request = S3Request.from_scope(scope, self.domain)
            request.request_id = request_id() or new_request_id()
            call = Call(
                request, receive, send, self.client, None, None, self.repository, self.region
            )
            call.verify_reads = self.verify_reads
            call.body_timeout = self.body_timeout
            note(scope, repository=request.bucket or "", ref=request.ref)
            found = self._route(request)
            if not isinstance(found, S3Error):
                note(scope, operation=found[0])
            self._authenticate(call)  # before any refusal of the route, as S3 does
            note(scope, access_key_id=request.caller)
            if isinstance(found, S3Error):
                raise found
            await found[1](call)
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

    def _route(self, request: S3Request) -> routes.Route | S3Error:
        try:
            return routes.route(request, self.namespace_root)
        except S3Error as refused:
            return refused

    def _authenticate(self, call: Call) -> None:
        request = call.request
        v2 = sigv2.parse(request.signed, request.query)
        if v2 is not None:
            principal, secret = self._principal(v2.access_key_id)
            prefix = f"/{request.bucket}" if request.virtual_host else ""
            sigv2.verify(request.signed, v2, secret, bucket_prefix=prefix)
        else:
            signature = sigv4.parse(request.signed, request.query)
            if signature is None:
                raise S3Error("AccessDenied", "anonymous access is not allowed: sign requests", 403)
            principal, secret = self._principal(signature.access_key_id)
            call.verified = sigv4.verify(request.signed, signature, secret)
        call.principal = principal
        request.caller = principal.access_key_id

    def _principal(self, access_key_id: str) -> tuple[Principal, str]:
        try:
            return self.auth.lookup(access_key_id)
        except AuthenticationFailed:
            raise S3Error(
                "InvalidAccessKeyId",
                "the AWS access key ID you provided does not exist in our records",
                403,
            ) from None

    async def _fail(
        self, scope: dict[str, Any], send: Send, call: Call | None, exc: Exception
    ) -> None:
        if not isinstance(exc, S3Error | sigv4.SignatureError) and not _expected(exc):
            log.exception("S3 %s %s failed", scope.get("method"), scope.get("path"))
        if call is None:
            request = _bare(scope)
            call = Call(request, _no_body, send, self.client, None, None, self.repository)
        if call.started:
            raise exc  # the answer is on its way: only dropping the connection tells the client
        await call.error(exc)


def _expected(exc: Exception) -> bool:
    """Errors that are the caller's (logged only at INFO): graveler's own, but for a store or
    a file failing."""
    return isinstance(exc, GravelerError) and not isinstance(exc, StorageError | CorruptFile)


def _bare(scope: dict[str, Any]) -> S3Request:
    request = S3Request(scope.get("method", "GET"), b"/", b"", [], {}, None, None)
    request.request_id = request_id() or new_request_id()
    return request


async def _no_body() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}
