"""The lakeFS API as an ASGI application: route, read the body, authenticate, check the
caller's scope, run the handler on a worker thread, answer.

One thread hop per call: the credentials check (cached per key by the authenticator), the
scope check, the repository handle (cached per worker) and the engine work all run in it.
Errors, whatever raises them, become lakeFS's ``{"message": ...}`` with its status
(:mod:`.errors`); a HEAD answer carries no body. An answer that does not read the whole
request body closes the connection, so the rest of the body is never taken for the next
request.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

from graveler.server.lakefs.caller import principal_of
from graveler.server.lakefs.errors import ApiError, body, classify
from graveler.server.lakefs.http import (
    JSON_TYPE,
    MAX_JSON_BODY,
    Call,
    ClientGone,
    Receive,
    Reply,
    Send,
    body_reader,
    read_body,
)
from graveler.server.lakefs.routing import Access, Body, Route, Router
from graveler.server.lakefs.service import Service
from graveler.server.observe import note

log = logging.getLogger("graveler.server.lakefs")
#: Where the API is mounted.
PREFIX = "/api/v1"
#: Uploads up to this size are read whole before the handler runs.
SMALL_UPLOAD = 1 << 20
#: Worker threads per server worker (engine calls block on the database and the store).
THREADS = 32


class LakeFSApi:
    """The API over ``service`` with ``routes`` (see the module docstring)."""

    def __init__(self, service: Service, routes: Sequence[Route]) -> None:
        self.service = service
        self.router = Router(routes)
        self.executor = ThreadPoolExecutor(THREADS, thread_name_prefix="lakefs-api")

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        method = scope["method"]
        try:
            found, params = self.router.match(method, relative_path(scope))
        except ApiError as exc:
            await answer(send, error_reply(exc.status, exc.message), scope, close=has_body(scope))
            return
        call = Call(self.service, method, params, query_of(scope), headers_of(scope))
        ref = params.get("branch") or params.get("ref") or params.get("sourceRef") or ""
        note(scope, operation=found.handler.__name__, repository=params.get("repository"), ref=ref)
        loop = asyncio.get_running_loop()
        try:
            unread = await self._take_body(call, found, receive, loop)
        except BodyTooLarge as exc:
            await answer(send, error_reply(413, str(exc)), scope, close=True)
            return
        except ClientGone:
            return
        work = contextvars.copy_context()  # the request's ID reaches the error bodies
        reply = await loop.run_in_executor(self.executor, work.run, self.serve, call, found)
        note(scope, access_key_id=call.principal.access_key_id if call.principal else "")
        if unread is None and call.body_reader is not None:
            unread = not call.body_reader.complete
            call.body_reader.close()
        await self._send(send, reply, scope, close=bool(unread), loop=loop)

    def serve(self, call: Call, found: Route) -> Reply:
        """Authenticate, check access, run the handler (on a worker thread)."""
        try:
            if found.access is not Access.PUBLIC:
                call.principal = principal_of(self.service.auth, call.headers)
                check_access(call, found.access)
            return found.handler(call)
        except ClientGone:
            return error_reply(400, "the request body ended early: the client went away")
        except Exception as exc:
            status, message = classify(exc)
            failed = error_reply(status, message)
            if isinstance(exc, ApiError):
                failed.headers.extend(exc.headers)
            return failed

    async def _take_body(
        self, call: Call, found: Route, receive: Receive, loop: asyncio.AbstractEventLoop
    ) -> bool | None:
        """Read the body the route takes (or set up its streaming); True when a body is
        left unread, None when the handler reads it (streamed)."""
        if found.body is Body.NONE:
            return has_body_headers(call.headers)
        if found.body is Body.UPLOAD:
            length = call.header("content-length")
            if length is None or not length.isdigit() or int(length) > SMALL_UPLOAD:
                call.body_reader = body_reader(receive, loop)
                return None
        limit = SMALL_UPLOAD if found.body is Body.UPLOAD else MAX_JSON_BODY
        call.raw, complete = await read_body(receive, limit)
        if not complete:
            raise BodyTooLarge(f"request size exceeded: the body is larger than {limit} bytes")
        return False

    async def _send(
        self,
        send: Send,
        reply: Reply,
        scope: dict[str, Any],
        *,
        close: bool,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        if reply.stream is None or scope["method"] == "HEAD":
            try:
                await answer(send, reply, scope, close=close)
            finally:
                if reply.close is not None:
                    await loop.run_in_executor(self.executor, reply.close)
            return
        try:
            await start(send, reply, close=close)
            await self._stream(send, reply.stream, loop)
        finally:
            if reply.close is not None:
                await loop.run_in_executor(self.executor, reply.close)

    async def _stream(
        self, send: Send, pieces: Iterator[bytes], loop: asyncio.AbstractEventLoop
    ) -> None:
        while True:
            piece = await loop.run_in_executor(self.executor, next, pieces, None)
            if piece is None:
                break
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})


class BodyTooLarge(Exception):
    """A body over the route's limit (answered 413, the connection closed)."""


def check_access(call: Call, access: Access) -> None:
    """The caller's key may do what the route needs (403 otherwise, 401 without a key)."""
    principal = call.who
    if access is Access.READ:
        principal.require_read(call.params["repository"])
    elif access is Access.WRITE:
        principal.require_write(call.params["repository"])
    elif access is Access.ADMIN:
        principal.require_admin()


def error_reply(status: int, message: str) -> Reply:
    return Reply(status, body(message), JSON_TYPE)


async def answer(send: Send, reply: Reply, scope: dict[str, Any], *, close: bool) -> None:
    """A whole answer (without its body for HEAD)."""
    head = scope["method"] == "HEAD"
    if reply.length is None:
        reply.length = len(reply.body)
    await start(send, reply, close=close)
    await send({"type": "http.response.body", "body": b"" if head else reply.body})


async def start(send: Send, reply: Reply, *, close: bool) -> None:
    headers = [(k.lower().encode("latin-1"), _latin1(v)) for k, v in reply.headers]
    if reply.content_type is not None:
        headers.append((b"content-type", reply.content_type.encode("latin-1")))
    if reply.length is not None:
        headers.append((b"content-length", str(reply.length).encode()))
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})


def _latin1(value: str) -> bytes:
    return value.encode("latin-1", "replace")


def relative_path(scope: dict[str, Any]) -> str:
    """The request's raw path below ``/api/v1`` (still percent-encoded)."""
    raw = scope.get("raw_path")
    text = raw.decode("latin-1") if raw else str(scope["path"])
    with contextlib.suppress(ValueError):
        text = text[: text.index("?")]
    if text.startswith(PREFIX):
        text = text[len(PREFIX) :]
    return text


def query_of(scope: dict[str, Any]) -> dict[str, list[str]]:
    raw = scope.get("query_string", b"")
    if not raw:
        return {}
    return parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)


def headers_of(scope: dict[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in scope["headers"]:
        key = name.decode("latin-1").lower()
        if key not in found:
            found[key] = value.decode("latin-1")
    return found


def has_body(scope: dict[str, Any]) -> bool:
    return has_body_headers(headers_of(scope))


def has_body_headers(headers: Mapping[str, str]) -> bool:
    """Whether the request declares a body (which a handler that takes none leaves unread)."""
    length = headers.get("content-length")
    return "transfer-encoding" in headers or (length is not None and length not in ("", "0"))
