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
from graveler.server.app import create_server_app
from graveler.server.config import CONFIG_ENV, ServerConfig
from graveler.server.listen import bind


def urls(config: ServerConfig, port: int) -> dict[str, str]:
    host = f"[{config.host}]" if ":" in config.host else config.host
    base = f"http://{host}:{port}"
    return {
        "ui": base + "/",
        "s3": base,
        "iceberg": base + "/iceberg/api",
        "lakefs": base + "/api/v1",
    }


def app_factory() -> Any:
    """The application of one worker (uvicorn's ``factory=True`` entry point)."""
    config = ServerConfig.from_json(os.environ[CONFIG_ENV])
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
