"""The contract tap itself: it relays bytes unchanged, follows kept-alive connections (HEAD
answers included), and reports an answer that breaks lakeFS's OpenAPI document. Checked
against a small server on loopback that answers what the test tells it to."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.lakefs_clients.contract import contract
from tests.lakefs_clients.tap import ContractTap

GOOD_CONFIG = {
    "version_config": {"version": "1.84.0", "upgrade_recommended": False},
    "storage_config": {
        "blockstore_type": "local",
        "blockstore_namespace_example": "local://example",
        "blockstore_namespace_ValidityRegex": "^local://",
        "pre_sign_support": False,
        "pre_sign_support_ui": False,
        "import_support": True,
        "import_validity_regex": "^local://",
    },
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    answers: dict[str, tuple[int, bytes]] = {}

    def _answer(self, with_body: bool) -> None:
        status, body = self.answers[self.path.split("?")[0]]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer(True)

    def do_HEAD(self) -> None:
        self._answer(False)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def fake() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_good_and_bad_answers_on_one_kept_alive_connection(fake: ThreadingHTTPServer) -> None:
    bad = {"version_config": {"version": 184}, "storage_config": {"blockstore_type": 1}}
    _Handler.answers = {
        "/api/v1/config": (200, json.dumps(GOOD_CONFIG).encode()),
        "/api/v1/repositories/r/refs/main/objects/stat": (200, json.dumps(bad).encode()),
        "/elsewhere": (200, b"[]"),
    }
    tap = ContractTap(("127.0.0.1", fake.server_address[1]), contract())
    try:
        conn = http.client.HTTPConnection("127.0.0.1", tap.port, timeout=10)
        for method, path in [
            ("GET", "/api/v1/config"),
            ("HEAD", "/elsewhere"),
            ("GET", "/elsewhere"),
            ("GET", "/api/v1/repositories/r/refs/main/objects/stat?path=a"),
            ("GET", "/api/v1/config"),
        ]:
            conn.request(method, path)
            response = conn.getresponse()
            body = response.read()
            expected = b"" if method == "HEAD" else _Handler.answers[path.split("?")[0]][1]
            assert body == expected  # relayed unchanged
        conn.close()
        assert tap.checked["GET /api/v1/config -> 200"] == 2
        assert tap.checked["GET /api/v1/repositories/r/refs/main/objects/stat -> 200"] == 1
        assert sum(tap.checked.values()) == 3  # /elsewhere is not the API's
        found = tap.take_violations()
        assert len(found) == 1 and "objects/stat" in found[0], found
        assert tap.take_violations() == []
    finally:
        tap.close()
