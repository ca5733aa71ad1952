"""uvicorn's HTTP protocols, answering a request they cannot parse (a negative or malformed
``Content-Length``, a broken request line) with S3's XML error instead of uvicorn's plain
text: such a request cannot be routed to an interface, and S3 clients are the ones that
send bodies.

The answer is a 400 ``InvalidRequest`` with a request ID, logged like every other request
(:mod:`graveler.server.observe`), and the connection is closed.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # no httptools: uvicorn (and graveler) use h11
    HttpToolsProtocol = H11Protocol  # type: ignore[misc,assignment]

from graveler.server.observe import finish, new_request_id, start_record

MESSAGE = "the request could not be parsed as HTTP/1.1 (a malformed line or header)"


def error_response(rid: str) -> bytes:
    """The raw 400 answer (status line, headers, S3's XML error)."""
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidRequest</Code>'
        f"<Message>{MESSAGE}</Message><Resource>/</Resource><RequestId>{rid}</RequestId>"
        "</Error>"
    ).encode()
    head = (
        "HTTP/1.1 400 Bad Request\r\n"
        "content-type: application/xml\r\n"
        f"content-length: {len(body)}\r\n"
        f"x-amz-request-id: {rid}\r\n"
        "connection: close\r\n\r\n"
    ).encode()
    return head + body


def _send_400(protocol: Any) -> None:
    record = start_record({"client": getattr(protocol, "client", None)}, "s3")
    record.status = 400
    response = error_response(record.request_id or new_request_id())
    record.bytes_out = len(response)
    protocol.transport.write(response)
    protocol.transport.close()
    finish(record)


class S3H11Protocol(H11Protocol):
    """uvicorn's h11 protocol (pure Python) with S3's answer to unparseable requests."""

    def send_400_response(self, msg: str) -> None:
        _send_400(self)


class S3HttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with S3's answer to unparseable requests."""

    def send_400_response(self, msg: str) -> None:
        _send_400(self)


def http_protocol() -> str:
    """The protocol class for ``uvicorn.Config(http=...)``, as an import string (worker
    processes load it): httptools' where it is installed (uvicorn's own choice), else h11's."""
    fast = importlib.util.find_spec("httptools") is not None
    return f"{__name__}:{'S3HttpToolsProtocol' if fast else 'S3H11Protocol'}"
