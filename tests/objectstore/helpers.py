"""Test helpers: a chunk-counting (optionally failing) reader and fault-injecting loopback S3
proxies: :class:`FlakyProxy` (the first N requests get ``503 SlowDown``, some GET bodies are
cut off) and :class:`FaultProxy` (a random share of requests get a fault of every kind: 500,
503 SlowDown, slow responses, responses slower than the client's timeout, connections dropped
before or after the request reached S3, bodies cut off; or a permanent outage)."""

from __future__ import annotations

import http.client
import random
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, BinaryIO, Self, cast
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
INTERNAL_ERROR_XML = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>'
    b"<Message>We encountered an internal error. Please try again.</Message>"
    b"<RequestId>FAULTPROXY</RequestId></Error>"
)

#: Fault kinds a proxy can inject into one request.
FAULT_500 = "500"
FAULT_503 = "503-slowdown"
FAULT_SLOW = "slow"  # answered after SLOW_SECONDS
FAULT_TIMEOUT = "timeout"  # answered after the client's read timeout (the request still runs)
FAULT_DROP = "drop"  # connection closed before the request reaches S3
FAULT_DROP_AFTER = "drop-after"  # the request runs on S3, then the connection is closed
FAULT_TRUNCATE = "truncate"  # a GET body is cut in half
FAULT_KINDS = (
    FAULT_500,
    FAULT_503,
    FAULT_SLOW,
    FAULT_TIMEOUT,
    FAULT_DROP,
    FAULT_DROP_AFTER,
    FAULT_TRUNCATE,
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

    def next_fault(self, method: str) -> str | None:
        """The fault to inject into the next request (None: forward it untouched)."""
        with self._lock:
            if self.failures is None or self.errors_served < self.failures:
                self.errors_served += 1
                return FAULT_503
            self.forwarded += 1
            if method == "GET" and self.truncate_gets > 0:
                self.truncate_gets -= 1
                return FAULT_TRUNCATE
            return None

    def delay_for(self, fault: str) -> float:
        """How long a slow fault waits before answering (FlakyProxy injects none)."""
        return 0.0

    def reset(self, failures: int | None) -> None:
        with self._lock:
            self.failures, self.errors_served, self.forwarded = failures, 0, 0

    def __enter__(self) -> Self:
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
                parts: list[bytes] = []
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
            fault = proxy.next_fault(self.command)
            if fault in (FAULT_500, FAULT_503):
                self._error(500 if fault == FAULT_500 else 503)
            elif fault == FAULT_DROP:
                self.close_connection = True
            elif fault == FAULT_DROP_AFTER:
                self._upstream(body)
                self.close_connection = True
            else:
                if fault in (FAULT_SLOW, FAULT_TIMEOUT):
                    time.sleep(proxy.delay_for(fault))
                status, headers, data = self._upstream(body)
                self._reply(status, headers, data, truncate=fault == FAULT_TRUNCATE)

        def _error(self, status: int) -> None:
            payload = b""
            if self.command != "HEAD":
                payload = INTERNAL_ERROR_XML if status == 500 else SLOWDOWN_XML
            self.send_response(status)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _upstream(self, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
            conn = http.client.HTTPConnection(*proxy.upstream, timeout=30)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                if body or self.command in ("PUT", "POST"):
                    headers["Content-Length"] = str(len(body))
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                return resp.status, resp.getheaders(), resp.read()
            finally:
                conn.close()

        def _reply(
            self, status: int, headers: list[tuple[str, str]], data: bytes, truncate: bool
        ) -> None:
            self.send_response(status)
            length = None
            for name, value in headers:
                if name.lower() == "content-length" and self.command == "HEAD":
                    length = value
                if name.lower() not in _HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Content-Length", length or str(len(data)))
            self.end_headers()
            if truncate and self.command == "GET":
                self.wfile.write(data[: len(data) // 2])
                self.close_connection = True
                return
            self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _handle

    return Handler


class FaultProxy(FlakyProxy):
    """A loopback proxy in front of an S3 endpoint that injects a fault into a random share
    (``rate``) of requests, cycling through ``kinds`` so that every kind shows up. With
    ``outage`` set, every request fails (503 or a dropped connection, alternately).
    ``injected`` counts faults by kind; ``requests`` counts every request."""

    def __init__(
        self,
        upstream: str,
        *,
        rate: float,
        seed: int,
        kinds: tuple[str, ...] = FAULT_KINDS,
        slow_seconds: float = 0.2,
        timeout_seconds: float = 1.5,
    ) -> None:
        super().__init__(upstream, failures=0)
        self.rate = rate
        self.kinds = kinds
        self.outage = False
        self.slow_seconds = slow_seconds
        self.timeout_seconds = timeout_seconds
        self.injected: Counter[str] = Counter()
        self.requests = 0
        self._rng = random.Random(seed)
        self._turn = 0

    def delay_for(self, fault: str) -> float:
        return self.timeout_seconds if fault == FAULT_TIMEOUT else self.slow_seconds

    def next_fault(self, method: str) -> str | None:
        with self._lock:
            self.requests += 1
            if self.outage:
                fault = (FAULT_503, FAULT_DROP)[self.requests % 2]
            elif self._rng.random() < self.rate:
                fault = self._take_turn(method)
            else:
                return None
            self.injected[fault] += 1
            return fault

    def _take_turn(self, method: str) -> str:
        """The next kind in the cycle that applies to ``method`` (truncation needs a body)."""
        for _ in range(len(self.kinds)):
            fault = self.kinds[self._turn % len(self.kinds)]
            self._turn += 1
            if fault != FAULT_TRUNCATE or method == "GET":
                return fault
        return FAULT_503
