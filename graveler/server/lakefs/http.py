"""One API call: its parameters, its caller, its body, and the answer it produces.

Handlers are plain functions of a :class:`Call` returning a :class:`Reply`; they run on a
worker thread (the engine blocks), so they may call the engine directly. A request body is
either read whole before the handler runs (JSON bodies, small uploads) or, for a large
upload, read by the handler through :meth:`Call.stream`, a blocking file over the body that
pulls it from the event loop in batches.

Query parameters follow lakeFS's validation (its server checks every request against the
OpenAPI document before its handlers run): a boolean is ``true`` or ``false``, ``amount``
is an integer from -1 to 1000 (anything below 1 means the default, 100), and a malformed
value is a 400 naming the parameter.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graveler.server.bodies import ThreadBodyReader
from graveler.server.lakefs.errors import ApiError, bad_request

if TYPE_CHECKING:
    from graveler.repository import Repository
    from graveler.server.auth import Principal
    from graveler.server.lakefs.service import Service

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
JSON_TYPE = "application/json"
#: lakeFS's page sizes.
DEFAULT_AMOUNT = 100
MAX_AMOUNT = 1000
#: A JSON body larger than this is refused (lakeFS's own bodies are small).
MAX_JSON_BODY = 16 << 20
#: Bodies read in batches of at least this many bytes (one thread hop each).
BATCH_BYTES = 1 << 20


class ClientGone(ConnectionError):
    """The client disconnected before its request body was complete."""


@dataclass
class Reply:
    """An answer: ``body`` (bytes) or ``stream`` (a blocking iterator of pieces, read on a
    worker thread), with ``length`` as Content-Length when it is not ``len(body)``."""

    status: int
    body: bytes = b""
    content_type: str | None = JSON_TYPE
    headers: list[tuple[str, str]] = field(default_factory=list)
    stream: Iterator[bytes] | None = None
    length: int | None = None
    close: Callable[[], object] | None = None


def json_reply(doc: Any, status: int = 200, headers: list[tuple[str, str]] | None = None) -> Reply:
    """``doc`` as JSON."""
    return Reply(status, dumps(doc), JSON_TYPE, headers or [])


def _dumps(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


#: orjson where installed (a listing of 1,000 objects encodes in 0.1 ms instead of 1.4 ms),
#: else the standard library.
dumps: Callable[[Any], bytes]
try:
    from orjson import dumps
except ImportError:  # pragma: no cover - orjson comes with the server extra
    dumps = _dumps


def no_content(status: int = 204) -> Reply:
    return Reply(status, b"", None)


class Call:
    """One request as a handler sees it. ``principal`` is the authenticated caller (None
    only on the few public operations)."""

    def __init__(
        self,
        service: Service,
        method: str,
        params: dict[str, str],
        query: dict[str, list[str]],
        headers: Mapping[str, str],
    ) -> None:
        self.service = service
        self.method = method
        self.params = params
        self.query = query
        self.headers = headers
        self.principal: Principal | None = None
        self.raw: bytes | None = None
        self.body_reader: ThreadBodyReader | None = None

    # --- the caller and the repository -------------------------------------------------------

    @property
    def who(self) -> Principal:
        """The caller; only public operations run without one."""
        if self.principal is None:
            raise ApiError(401, "error authenticating request")
        return self.principal

    @property
    def committer(self) -> str:
        """lakeFS records the user as committer: here, the access key ID."""
        return self.who.access_key_id

    def repository(self) -> Repository:
        """The repository the path names (the dispatcher checked the caller's scope)."""
        return self.service.repository(self.params["repository"])

    # --- query parameters --------------------------------------------------------------------

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default

    def required(self, name: str) -> str:
        value = self.arg(name)
        if value is None:
            raise bad_request(f"query parameter {name!r} is required")
        return value

    def args(self, name: str) -> list[str]:
        """Every value of a repeated parameter (``objects=a&objects=b``)."""
        return list(self.query.get(name, ()))

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.arg(name)
        if value is None or value == "":
            return default
        lowered = value.lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0"):
            return False
        raise bad_request(f"query parameter {name!r} must be true or false, got {value[:40]!r}")

    def amount(self) -> int:
        """``amount``: 1..1000 as given, the default (100) when absent or below 1."""
        value = self.arg("amount")
        if value is None or value == "":
            return DEFAULT_AMOUNT
        try:
            number = int(value)
        except ValueError:
            raise bad_request(
                f"query parameter 'amount' must be an integer, got {value[:40]!r}"
            ) from None
        if number < -1 or number > MAX_AMOUNT:
            raise bad_request(f"query parameter 'amount' must be between -1 and {MAX_AMOUNT}")
        return number if number > 0 else DEFAULT_AMOUNT

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    # --- the body ----------------------------------------------------------------------------

    def json(self, *, required: bool = True) -> dict[str, Any]:
        """The body as a JSON object; 400 when it is not one (an absent optional body is
        an empty object)."""
        raw = self.raw or b""
        if not raw.strip():
            if required:
                raise bad_request("request body is required")
            return {}
        try:
            doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise bad_request("request body is not valid JSON") from None
        if not isinstance(doc, dict):
            raise bad_request("request body must be a JSON object")
        return doc

    def json_list(self) -> list[Any]:
        """The body as a JSON array; 400 otherwise."""
        try:
            doc = json.loads(self.raw or b"")
        except (ValueError, UnicodeDecodeError):
            raise bad_request("request body is not valid JSON") from None
        if not isinstance(doc, list):
            raise bad_request("request body must be a JSON array")
        return doc

    def stream(self) -> io.RawIOBase:
        """The body as a blocking file (a large upload), or the bytes read before."""
        if self.body_reader is not None:
            return self.body_reader
        return io.BytesIO(self.raw or b"")  # type: ignore[return-value]


async def read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The whole body (up to ``limit`` bytes) and whether it fit: a body over the limit is
    left partly read (the answer must then close the connection)."""
    parts: list[bytes] = []
    total = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone("client went away")
        piece = message.get("body", b"")
        total += len(piece)
        if total > limit:
            return b"", False
        parts.append(piece)
        if not message.get("more_body", False):
            return b"".join(parts), True


def body_reader(receive: Receive, loop: asyncio.AbstractEventLoop) -> ThreadBodyReader:
    """A blocking file over a request body, for a worker thread (see
    :class:`graveler.server.bodies.ThreadBodyReader`): batches of at least :data:`BATCH_BYTES`
    are gathered on the event loop, the next one while the thread works on this one."""

    async def gather() -> tuple[list[bytes], bool]:
        parts: list[bytes] = []
        total = 0
        while total < BATCH_BYTES:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientGone("client went away during the upload")
            piece = message.get("body", b"")
            if piece:
                parts.append(piece)
                total += len(piece)
            if not message.get("more_body", False):
                return parts, True
        return parts, False

    return ThreadBodyReader(gather, loop)
