"""Test helpers: a chunk-counting (optionally failing) reader and a flaky loopback S3 proxy."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, BinaryIO, cast
from urllib.parse import urlsplit


class ReaderBroke(Exception):
    """Raised by a CountingReader told to fail."""


class CountingReader:
    """A non-seekable binary stream over ``data`` that records every ``read`` size.

    Returns at most ``max_chunk`` bytes per call (like a socket); raises ReaderBroke on the
    read after ``fail_after`` successful reads when that is set."""

    def __init__(self, data: bytes, max_chunk: int = 1 << 20, fail_after: int | None = None):
        self._data = memoryview(data)
        self._pos = 0
        self._max_chunk = max_chunk
        self._fail_after = fail_after
        self.sizes: list[int | None] = []

    def read(self, size: int | None = -1) -> bytes:
        self.sizes.append(size)
        if self._fail_after is not None and len(self.sizes) > self._fail_after:
            raise ReaderBroke(f"stream broke after {self._fail_after} reads")
        want = self._max_chunk if size is None or size < 0 else min(size, self._max_chunk)
        chunk = bytes(self._data[self._pos : self._pos + want])
        self._pos += len(chunk)
        return chunk

    def as_binary(self) -> BinaryIO:
        return cast(BinaryIO, self)


SLOWDOWN_XML = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message>"
    b"<RequestId>FLAKYPROXY</RequestId></Error>"
)
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "proxy-connection",
        "content-length",
        "date",
        "server",
    }
)


class FlakyProxy:
    """A loopback HTTP proxy in front of an S3 endpoint that answers ``503 SlowDown`` to the
    first ``failures`` requests (all requests when ``failures`` is None), then forwards."""

    def __init__(self, upstream: str, failures: int | None) -> None:
        parts = urlsplit(upstream)
        assert parts.hostname == "127.0.0.1", "the proxy only forwards to loopback"
        self.upstream = (parts.hostname, parts.port or 80)
        self.failures = failures
        self.errors_served = 0
        self.forwarded = 0
        self.truncate_gets = 0  # this many forwarded GET bodies are cut in half
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def should_fail(self) -> bool:
        with self._lock:
            if self.failures is None or self.errors_served < self.failures:
                self.errors_served += 1
                return True
            self.forwarded += 1
            return False

    def take_truncation(self, method: str) -> bool:
        with self._lock:
            if method != "GET" or self.truncate_gets <= 0:
                return False
            self.truncate_gets -= 1
            return True

    def reset(self, failures: int | None) -> None:
        with self._lock:
            self.failures, self.errors_served, self.forwarded = failures, 0, 0

    def __enter__(self) -> FlakyProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def _make_handler(proxy: FlakyProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _read_body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                parts = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return b"".join(parts)
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length", 0)))

        def _handle(self) -> None:
            body = self._read_body()
            if proxy.should_fail():
                payload = b"" if self.command == "HEAD" else SLOWDOWN_XML
                self.send_response(503)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            self._forward(body)

        def _forward(self, body: bytes) -> None:
            conn = http.client.HTTPConnection(*proxy.upstream, timeout=30)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                if body or self.command in ("PUT", "POST"):
                    headers["Content-Length"] = str(len(body))
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                for name, value in resp.getheaders():
                    if name.lower() not in _HOP_BY_HOP:
                        self.send_header(name, value)
                length = resp.getheader("Content-Length") if self.command == "HEAD" else None
                self.send_header("Content-Length", length or str(len(data)))
                self.end_headers()
                if proxy.take_truncation(self.command):
                    self.wfile.write(data[: len(data) // 2])
                    self.close_connection = True
                    return
                self.wfile.write(data)
            finally:
                conn.close()

        do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _handle

    return Handler
