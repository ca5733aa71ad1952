"""Running the server: uvicorn (with httptools and uvloop where installed) on a socket bound
first, with one process or N workers that each open their own client.

Binding before serving lets ``--port 0`` pick a free port and report it, and turns "address
in use" into a clear error. Workers are uvicorn's own multiprocess supervisor; each builds
the application from :class:`~graveler.server.config.ServerConfig`, passed as JSON in the
environment (``GRAVELER_SERVE_CONFIG``).
"""

from __future__ import annotations

import os
import socket
from typing import Any

from graveler.client import Graveler
from graveler.server import observe
from graveler.server.app import create_server_app
from graveler.server.config import CONFIG_ENV, ServerConfig
from graveler.server.listen import bind
from graveler.server.protocol import http_protocol
from graveler.server.routing import API_PREFIX, ICEBERG_PREFIX


def urls(config: ServerConfig, port: int) -> dict[str, str]:
    """The server's URLs at an address a client can open: a wildcard address (``0.0.0.0``,
    ``::``) is shown as the loopback address of its family."""
    host = visible_host(config.host)
    host = f"[{host}]" if ":" in host else host
    base = f"http://{host}:{port}"
    return {
        "ui": base + "/",
        "s3": base,
        "iceberg": base + ICEBERG_PREFIX,
        "lakefs": base + API_PREFIX,
    }


def visible_host(host: str) -> str:
    bare = host.strip("[]")
    if bare in ("", "0.0.0.0"):
        return "127.0.0.1"
    if bare == "::":
        return "::1"
    return bare


def addresses(host: str) -> list[str]:
    """Where other machines reach a server listening on a wildcard address: this machine's
    addresses by its host name (none for a specific address, or when they cannot be
    found)."""
    if host.strip("[]") not in ("", "0.0.0.0", "::"):
        return []
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, proto=socket.IPPROTO_TCP)
    except OSError:
        return []
    found = {str(info[4][0]) for info in infos}
    wanted = socket.AF_INET6 if ":" in host else socket.AF_INET
    same = {str(i[4][0]) for i in infos if i[0] == wanted}
    return sorted(a for a in (same or found) if not a.startswith(("127.", "::1")))


def app_factory() -> Any:
    """The application of one worker (uvicorn's ``factory=True`` entry point)."""
    config = ServerConfig.from_json(os.environ[CONFIG_ENV])
    observe.configure(config.access_log)
    client = Graveler(settings=config.client_settings())
    return create_server_app(client, config)


def uvicorn_config(config: ServerConfig, sock: socket.socket) -> Any:
    import uvicorn

    os.environ[CONFIG_ENV] = config.to_json()
    return uvicorn.Config(
        "graveler.server.run:app_factory",
        factory=True,
        fd=sock.fileno(),
        workers=config.workers,
        lifespan="on",
        log_level="warning",
        access_log=False,
        timeout_keep_alive=30,
        server_header=False,
        http=http_protocol(),
    )


def serve(config: ServerConfig, sock: socket.socket | None = None) -> None:
    """Serve until interrupted (the socket is bound here unless given)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    sock = sock or bind(config.host, config.port)
    uv = uvicorn_config(config, sock)
    server = uvicorn.Server(uv)
    if config.workers > 1:
        Multiprocess(uv, sockets=[sock]).run()
    else:
        server.run(sockets=[sock])


def check(config: ServerConfig) -> None:
    """Fail before serving when the configuration cannot work (database, server key)."""
    from graveler.server.app import authenticator_for

    with Graveler(settings=config.client_settings()) as client:
        authenticator_for(client)
