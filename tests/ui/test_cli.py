"""``graveler ui``: serves the UI over the CLI's configuration, on 127.0.0.1 by default, and
keeps the web stack out of every other command's start-up."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

from graveler.client import Graveler


def _get(url: str, host: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _first_document(stream: IO[str]) -> dict[str, Any]:
    text = ""
    while True:
        text += stream.readline()
        try:
            return dict(json.loads(text))
        except json.JSONDecodeError:
            continue


def test_graveler_ui_serves_the_cli_configuration_on_loopback(tmp_path: Path):
    home = tmp_path / "elsewhere"
    with Graveler(home=home) as gv:
        gv.create_repository("cli-lake")
    command = [
        sys.executable,
        "-m",
        "graveler.cli",
        "--json",
        "--home",
        str(home),
        "ui",
        "--port",
        "0",
    ]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        started = _first_document(server.stdout)
        url = started["url"]
        assert url.startswith("http://127.0.0.1:") and started["allow_writes"] is False
        status, body = _get(url + "/")
        assert status == 200 and "cli-lake" in body and "read-only" in body
        assert _get(url + "/", host="attacker.example")[0] == 400
    finally:
        server.terminate()
        server.wait(timeout=30)


def _ui(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "graveler.cli", "--home", str(home), "ui", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_the_ui_command_line_refuses_what_it_cannot_do(tmp_path: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = _ui(tmp_path, "--port", str(port))
    assert busy.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in busy.stderr
    wrong = _ui(tmp_path, "--port", "70000")
    assert wrong.returncode == 2 and "a port is a number from 0 to 65535" in wrong.stderr
    for answer in (busy, wrong):
        assert "Traceback" not in answer.stderr


def test_other_commands_do_not_import_the_web_stack():
    probe = (
        "import sys, graveler.cli.app as a; a.build_parser(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('fastapi', 'starlette', 'uvicorn', 'jinja2')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "[]"
