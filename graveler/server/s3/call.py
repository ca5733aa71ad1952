"""One S3 call in progress: the request, who makes it, the repository it addresses, and how
to answer (bytes, XML, errors, streams)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio.to_thread

from graveler.client import Graveler
from graveler.core.errors import InvalidName, RepositoryNotFound
from graveler.repository import Repository
from graveler.server.auth import Principal
from graveler.server.s3.body import Body, Receive
from graveler.server.s3.errors import S3Error, from_graveler, no_such_bucket
from graveler.server.s3.request import S3Request
from graveler.server.s3.xml import error_document
from graveler.server.sigv4 import Verified

T = TypeVar("T")
Send = Callable[[dict[str, Any]], Any]
SERVER = b"graveler"


@dataclass
class Call:
    request: S3Request
    receive: Receive
    send: Send
    client: Graveler
    principal: Principal | None
    verified: Verified | None
    repositories: Callable[[str], Repository]
    region: str = "us-east-1"
    verify_reads: bool = False
    #: Seconds a request body may stall before the answer is RequestTimeout.
    body_timeout: float = 20.0
    started: bool = field(default=False)
    bodies: list[Body] = field(default_factory=list)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on a worker thread (engine calls block)."""
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))

    def body(self) -> Body:
        body = Body(self.receive, self.request, self.verified, timeout=self.body_timeout)
        self.bodies.append(body)
        return body

    def unread_body(self) -> bool:
        """Whether the request carries a body that was not read to its end: an answer must
        then close the connection, or the rest of it would be taken for the next request."""
        if any(b.complete for b in self.bodies):
            return False
        length = self.request.header("content-length")
        return bool(self.request.header("transfer-encoding")) or (length not in (None, "0"))

    async def repository(self, *, write: bool = False) -> Repository:
        """The addressed repository, once the caller may read (and ``write``) it;
        NoSuchBucket / AccessDenied otherwise."""
        name = self.request.bucket or ""
        if self.principal is not None:
            if write:
                self.principal.require_write(name)
            else:
                self.principal.require_read(name)
        elif write:
            raise S3Error("AccessDenied", "anonymous requests may not write", 403)
        try:
            return await self.run(self.repositories, name)
        except RepositoryNotFound:
            raise no_such_bucket(name) from None
        except InvalidName:
            raise S3Error("InvalidBucketName", "the specified bucket is not valid", 400) from None

    async def respond(
        self,
        status: int,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        *,
        content_type: str | None = None,
        length: int | None = None,
    ) -> None:
        """A whole response. ``length`` overrides Content-Length (HEAD answers)."""
        await self.start(
            status,
            headers,
            content_type=content_type,
            length=len(body) if length is None else length,
        )
        await self.send({"type": "http.response.body", "body": body})

    async def xml(
        self, body: bytes, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> None:
        await self.respond(status, body, headers, content_type="application/xml")

    async def start(
        self,
        status: int,
        headers: Mapping[str, str] | None = None,
        *,
        content_type: str | None = None,
        length: int | None = None,
    ) -> None:
        raw = [
            (b"server", SERVER),
            (b"x-amz-request-id", self.request.request_id.encode()),
        ]
        if content_type is not None:
            raw.append((b"content-type", content_type.encode("latin-1", "replace")))
        if length is not None:
            raw.append((b"content-length", str(length).encode()))
        for name, value in (headers or {}).items():
            raw.append((name.lower().encode(), _header_bytes(value)))
        self.started = True
        await self.send({"type": "http.response.start", "status": status, "headers": raw})

    async def stream(self, pieces: AsyncIterator[bytes]) -> None:
        """The body of a started response, piece by piece."""
        async for piece in pieces:
            await self.send({"type": "http.response.body", "body": piece, "more_body": True})
        await self.send({"type": "http.response.body", "body": b""})

    async def error(self, exc: Exception) -> None:
        failure = from_graveler(exc)
        headers = {"Connection": "close"} if self.unread_body() else {}
        if self.request.method == "HEAD":  # HEAD answers carry no body
            await self.respond(failure.status, b"", {"x-amz-error-code": failure.code, **headers})
            return
        document = error_document(
            failure.code,
            failure.message,
            self.request.resource,
            self.request.request_id,
            **failure.extra,
        )
        await self.xml(document, failure.status, headers)


def _header_bytes(value: str) -> bytes:
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")
