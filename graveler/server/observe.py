"""What the server knows about each request it answers: a request ID, and one access-log line.

:class:`Observed` wraps the server's application. For every HTTP request it

* makes a request ID (16 upper-case hexadecimal digits, as S3's look), sends it back as
  ``x-amz-request-id`` on every answer, and makes it available to error bodies
  (:func:`request_id`: a context variable, so it reaches worker threads too);
* keeps a :class:`Record` in the scope (``scope[RECORD]``) that the interfaces fill in with
  :func:`note` (who asked, which operation, repository and ref);
* counts the bytes received and sent and times the answer, then logs the record on one line
  on the ``graveler.access`` logger (:func:`configure` says where and how: plain
  ``key=value`` text or JSON). The secret of a key never reaches a record.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
#: Where a request's :class:`Record` lives in its ASGI scope.
RECORD = "graveler.record"
LOGGER = "graveler.access"
#: Formats of the access log.
TEXT, JSON = "text", "json"
_current: contextvars.ContextVar[str] = contextvars.ContextVar("graveler_request_id", default="")
log = logging.getLogger(LOGGER)


def new_request_id() -> str:
    return os.urandom(8).hex().upper()


def request_id() -> str:
    """The ID of the request being answered ("" outside one)."""
    return _current.get()


@dataclass
class Record:
    """One request as the access log shows it."""

    request_id: str
    interface: str
    method: str
    path: str
    remote: str = ""
    access_key_id: str = ""
    operation: str = ""
    repository: str = ""
    ref: str = ""
    status: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    started: float = field(default_factory=time.perf_counter, repr=False)

    def fields(self) -> dict[str, Any]:
        """The log line's fields, in order (``time`` first, ``ms`` last)."""
        doc = asdict(self)
        started = doc.pop("started")
        now = datetime.now(UTC)
        ms = round((time.perf_counter() - started) * 1000, 1)
        return {"time": now.isoformat(timespec="milliseconds"), **doc, "ms": ms}


def record_of(scope: MutableMapping[str, Any]) -> Record | None:
    found = scope.get(RECORD)
    return found if isinstance(found, Record) else None


def note(scope: MutableMapping[str, Any], **fields: str | None) -> None:
    """Fill in the request's record (``access_key_id``, ``operation``, ``repository``,
    ``ref``); empty values are ignored."""
    record = record_of(scope)
    if record is not None:
        for name, value in fields.items():
            if value:
                setattr(record, name, value)


class Observed:
    """ASGI middleware: request IDs, records and the access log (see the module docstring).
    ``interface_of(scope)`` names the interface that will answer."""

    def __init__(self, app: ASGIApp, interface_of: Callable[[dict[str, Any]], str]) -> None:
        self.app = app
        self.interface_of = interface_of

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        record = start_record(scope, self.interface_of(scope))
        token = _current.set(record.request_id)

        async def counted_receive() -> dict[str, Any]:
            message = await receive()
            record.bytes_in += len(message.get("body", b""))
            return dict(message)

        async def counted_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                record.status = int(message["status"])
                message = _with_request_id(message, record.request_id)
            elif message["type"] == "http.response.body":
                record.bytes_out += len(message.get("body", b""))
            await send(message)

        try:
            await self.app({**scope, RECORD: record}, counted_receive, counted_send)
        except BaseException:
            record.status = record.status or 500
            raise
        finally:
            _current.reset(token)
            finish(record)


def start_record(scope: dict[str, Any], interface: str) -> Record:
    client = scope.get("client") or ("", 0)
    return Record(
        new_request_id(),
        interface,
        str(scope.get("method", "")),
        str(scope.get("path", "")),
        remote=str(client[0]) if client else "",
    )


def finish(record: Record) -> None:
    """Log a finished request (when the access log is on)."""
    if log.isEnabledFor(logging.INFO):
        log.info("%s %s", record.method, record.path, extra={"record": record})


def _with_request_id(message: dict[str, Any], rid: str) -> dict[str, Any]:
    headers = list(message.get("headers", []))
    if not any(name.lower() == b"x-amz-request-id" for name, _ in headers):
        headers.append((b"x-amz-request-id", rid.encode()))
    return {**message, "headers": headers}


class AccessFormatter(logging.Formatter):
    """One line per request: ``key=value`` pairs (``text``) or a JSON object (``json``)."""

    def __init__(self, style: str = TEXT) -> None:
        super().__init__()
        self.style_name = style

    def format(self, record: logging.LogRecord) -> str:
        found = getattr(record, "record", None)
        if not isinstance(found, Record):
            return super().format(record)
        fields = found.fields()
        if self.style_name == JSON:
            return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
        return " ".join(f"{name}={_text(value)}" for name, value in fields.items())


def _text(value: Any) -> str:
    text = str(value)
    if text == "" or any(c.isspace() or c in '"=' for c in text):
        return json.dumps(text, ensure_ascii=False)
    return text


def configure(style: str | None) -> None:
    """Turn the access log on (to stderr, in ``style``: :data:`TEXT` or :data:`JSON`) or,
    with None, off."""
    log.propagate = False
    for handler in list(log.handlers):
        log.removeHandler(handler)
    if style is None:
        log.setLevel(logging.WARNING)
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(AccessFormatter(style))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
