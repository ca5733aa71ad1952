"""A byte-for-byte relay in front of ``graveler serve`` that checks every lakeFS API answer.

The clients under test (Python SDKs, lakefs-spec, the JVM Hadoop FileSystem) are pointed at
the relay's port. Each connection is relayed as raw bytes in both directions, so the clients
see exactly what the server sends (framing, keep-alive, chunking and all); beside the relay,
h11 parses a copy of each direction. When an answer to a request under ``/api/v1`` is
complete, it is checked against lakeFS's OpenAPI document (:mod:`.contract`) *before* its last
bytes are passed on, so by the time a client call returns, its answers have been checked.
Problems accumulate in :attr:`ContractTap.violations`; the suites' fixtures fail the test
that caused them. Nothing leaves the loopback interface.
"""

from __future__ import annotations

import collections
import contextlib
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import h11

from tests.lakefs_clients.contract import PREFIX, Contract, Exchange

#: Bytes of an answer's body kept for checking (object downloads are longer; their schema is
#: a binary string, so a prefix checks the same).
BODY_LIMIT = 4 << 20
CHUNK = 65536


@dataclass(frozen=True)
class _Sent:
    method: str
    target: str
    host: str
    headers: list[tuple[str, str]]


class ContractTap:
    """Listens on 127.0.0.1 (``url``; ``port``, or a free one) and relays to ``upstream``
    (``host:port``)."""

    def __init__(self, upstream: tuple[str, int], contract: Contract, port: int = 0) -> None:
        self.upstream = upstream
        self.contract = contract
        self.violations: list[str] = []
        #: ``"METHOD /path -> status"`` of every checked answer (paths without their query).
        self.checked: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", port))
        self.port = self._listener.getsockname()[1]
        self._sockets: set[socket.socket] = set()
        self._closed = False
        threading.Thread(target=self._accept, name="contract-tap", daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def take_violations(self) -> list[str]:
        with self._lock:
            found, self.violations = self.violations, []
        return found

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            for sock in list(self._sockets):
                _shut(sock)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=30)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets.update((client, server))
            _Connection(self, client, server).start()

    def _record(self, exchange: Exchange) -> None:
        problems = self.contract.check(exchange)
        with self._lock:
            self.checked[f"{exchange.method} {exchange.path} -> {exchange.status}"] += 1
            self.violations.extend(problems)

    def _problem(self, text: str) -> None:
        with self._lock:
            self.violations.append(text)

    def _forget(self, *sockets: socket.socket) -> None:
        with self._lock:
            for sock in sockets:
                self._sockets.discard(sock)
                _shut(sock)


class _Connection:
    """One client connection: two pumps, each parsing a copy of what it relays."""

    def __init__(self, tap: ContractTap, client: socket.socket, server: socket.socket) -> None:
        self.tap = tap
        self.client = client
        self.server = server
        self.requests: collections.deque[_Sent] = collections.deque()
        self.arrived = threading.Condition()

    def start(self) -> None:
        threading.Thread(target=self._upstream, daemon=True).start()
        threading.Thread(target=self._downstream, daemon=True).start()

    def _upstream(self) -> None:
        """Client to server: requests are parsed (and queued) before their bytes go on."""
        parser: h11.Connection | None = h11.Connection(h11.SERVER)
        try:
            while data := self.client.recv(CHUNK):
                if parser is not None:
                    parser = self._parse_requests(parser, data)
                self.server.sendall(data)
            self.server.shutdown(socket.SHUT_WR)
        except OSError:
            self.tap._forget(self.client, self.server)

    def _parse_requests(self, parser: h11.Connection, data: bytes) -> h11.Connection | None:
        try:
            parser.receive_data(data)
            while True:
                event = parser.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    return parser
                if isinstance(event, h11.Request):
                    self._queue(event)
                elif isinstance(event, h11.EndOfMessage):
                    # This parser's own side never answers: a stand-in answer lets it read
                    # the next request on a kept-alive connection.
                    parser.send(h11.Response(status_code=204, headers=[]))
                    parser.send(h11.EndOfMessage())
                    if parser.our_state is h11.MUST_CLOSE:
                        return None
                    parser.start_next_cycle()
                elif isinstance(event, h11.ConnectionClosed):
                    return None
        except h11.ProtocolError as exc:
            self.tap._problem(f"a request could not be parsed, relayed unchecked: {exc}")
            return None

    def _queue(self, request: h11.Request) -> None:
        headers = _text(request.headers)
        host = next((v for k, v in headers if k.lower() == "host"), "localhost")
        sent = _Sent(request.method.decode(), request.target.decode("latin-1"), host, headers)
        with self.arrived:
            self.requests.append(sent)
            self.arrived.notify_all()

    def _downstream(self) -> None:
        """Server to client: an answer is checked before its last bytes go on."""
        reader = _AnswerReader(self)
        try:
            while data := self.server.recv(CHUNK):
                reader.feed(data)
                self.client.sendall(data)
            reader.feed(b"")
            self.client.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        finally:
            self.tap._forget(self.client, self.server)

    def next_request(self) -> _Sent | None:
        with self.arrived:
            if not self.requests:
                self.arrived.wait_for(lambda: bool(self.requests), timeout=30)
            return self.requests.popleft() if self.requests else None


class _AnswerReader:
    """Parses the server's side of one connection and checks each answer."""

    def __init__(self, connection: _Connection) -> None:
        self.connection = connection
        self.parser: h11.Connection | None = h11.Connection(h11.CLIENT)
        self.request: _Sent | None = None
        self.status = 0
        self.headers: list[tuple[str, str]] = []
        self.body = bytearray()

    def feed(self, data: bytes) -> None:
        if self.parser is None:
            return
        try:
            self._feed(self.parser, data)
        except h11.ProtocolError as exc:
            where = self.request.target[:200] if self.request else "?"
            self.connection.tap._problem(f"the answer to {where} could not be parsed: {exc}")
            self.parser = None

    def _feed(self, parser: h11.Connection, data: bytes) -> None:
        """``data`` empty: the server closed the connection (ends a body read to the end)."""
        if parser.our_state is h11.IDLE and (not data or not self._send_next(parser)):
            return
        parser.receive_data(data)
        while True:
            event = parser.next_event()
            if event is h11.NEED_DATA or event is h11.PAUSED:
                if event is h11.PAUSED and parser.our_state is h11.DONE:
                    parser.start_next_cycle()
                    if parser.trailing_data[0] and self._send_next(parser):
                        continue
                return
            if isinstance(event, h11.Response):
                self.status = event.status_code
                self.headers = _text(event.headers)
                self.body.clear()
            elif isinstance(event, h11.Data):
                room = BODY_LIMIT - len(self.body)
                if room > 0:
                    self.body += bytes(event.data[:room])
            elif isinstance(event, h11.EndOfMessage):
                self._finish()
            elif isinstance(event, h11.ConnectionClosed):
                self.parser = None
                return

    def _send_next(self, parser: h11.Connection) -> bool:
        """Tell the parser which request the next answer belongs to (HEAD has no body)."""
        self.request = self.connection.next_request()
        if self.request is None:
            self.connection.tap._problem("an answer arrived with no request before it")
            self.parser = None
            return False
        keep = [("Host", self.request.host)]
        keep += [(k, v) for k, v in self.request.headers if k.lower() == "connection"]
        parser.send(h11.Request(method=self.request.method, target="/", headers=keep))
        parser.send(h11.EndOfMessage())
        return True

    def _finish(self) -> None:
        sent = self.request
        if sent is None or not sent.target.startswith(PREFIX):
            return
        self.connection.tap._record(
            Exchange(
                sent.method,
                sent.target,
                sent.host,
                sent.headers,
                self.status,
                self.headers,
                bytes(self.body),
            )
        )


def _text(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
