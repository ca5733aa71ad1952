"""What ``graveler serve`` prints when it starts: URLs a browser opens.

Reproduced before the fix: with ``--host 0.0.0.0`` the banner printed
``http://0.0.0.0:PORT/``, which no browser opens.
"""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path

from graveler.server.run import addresses
from tests.serving import GRAVELER, Served


def test_the_banner_shows_addresses_a_browser_opens(tmp_path: Path):
    command = [*GRAVELER, "--home", str(tmp_path / "home"), "serve", "--host", "0.0.0.0"]
    process = subprocess.Popen(
        [*command, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    deadline = threading.Timer(30, process.kill)  # a banner shorter than expected: no hang
    deadline.start()
    try:
        lines = [process.stdout.readline() for _ in range(5)]
        for _ in addresses("0.0.0.0"):
            lines.append(process.stdout.readline())
    finally:
        deadline.cancel()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)
    text = "".join(lines)
    assert "0.0.0.0" not in text
    assert "web UI                http://127.0.0.1:" in text
    assert "S3 endpoint           http://127.0.0.1:" in text
    for address in addresses("0.0.0.0"):
        assert f"from other machines   http://{address}:" in text


def test_the_json_document_too(tmp_path: Path):
    with Served(tmp_path / "home", None, "--host", "0.0.0.0") as server:
        assert all("0.0.0.0" not in str(url) for url in server.urls.values())
        assert str(server.urls["ui"]).startswith("http://127.0.0.1:")
        assert server.urls["addresses"] == addresses("0.0.0.0")
        assert str(server.urls["lakefs"]).endswith("/api/v1")
