"""Serving the UI with uvicorn, on a socket bound before the server starts.

Binding first lets ``port=0`` pick a free port and report it (tests, ``graveler ui --port
0``) and turns "address in use" into a clear error. A server on a loopback address accepts
only loopback host names in the Host header (see ``allowed_hosts`` in
:func:`graveler.server.ui.app.create_app`): a web page elsewhere cannot reach it through DNS
rebinding.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from typing import Any

import uvicorn

from graveler.core.errors import InvalidArgument

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str) -> list[str] | None:
    """The Host header values a server bound to ``host`` accepts (None: any)."""
    return [*LOOPBACK_NAMES, host] if is_loopback(host) else None


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on (host, port); InvalidArgument when that is impossible."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise InvalidArgument(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


class UIServer:
    """A uvicorn server for ``app`` on an already bound socket. :meth:`run` serves in the
    calling thread until interrupted; :meth:`start` / :meth:`stop` serve from a thread."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        self.socket = bind(host, port)
        self.host = host
        self.port: int = self.socket.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        shown = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}"

    def run(self) -> None:
        self._server.run(sockets=[self.socket])

    def start(self, timeout: float = 20.0) -> str:
        """Serve from a daemon thread; returns the URL once the server accepts requests."""
        self._thread = threading.Thread(target=self.run, name="graveler-ui", daemon=True)
        self._thread.start()
        waited = 0.0
        while not self._server.started and waited < timeout and self._thread.is_alive():
            threading.Event().wait(0.02)
            waited += 0.02
        if not self._server.started:
            raise RuntimeError("the UI server did not start")
        return self.url

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.socket.close()
