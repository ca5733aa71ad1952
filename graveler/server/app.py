"""The one ASGI application of ``graveler serve``: S3 gateway, Iceberg catalog, lakeFS's REST
API and web UI on one port, sharing one client, one authenticator and one configuration.

Each request goes to exactly one interface, by the rules of :mod:`graveler.server.routing`,
and gets its errors in that interface's form. :class:`~graveler.server.observe.Observed`
wraps them all: request IDs and the access log.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from graveler.client import Graveler
from graveler.server import routing
from graveler.server.auth import Authenticator
from graveler.server.config import ServerConfig
from graveler.server.credentials import Credentials, server_key
from graveler.server.lakefs import create_app as create_lakefs_api
from graveler.server.observe import Observed, record_of, request_id
from graveler.server.s3.app import Gateway
from graveler.server.ui.signin import signed_in_ui

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
ICEBERG_PREFIX = routing.ICEBERG_PREFIX
#: The module that provides the Iceberg REST catalog (``create_app(client, authenticator)``).
ICEBERG_MODULE = "graveler.server.catalog.rest"
#: Where lakeFS's REST API is served (it routes the whole path itself).
LAKEFS_PREFIX = routing.API_PREFIX


def authenticator_for(client: Graveler) -> Authenticator:
    key = server_key(Path(client.home), client.database_url)
    return Authenticator(Credentials(client.access_keys, key), key)


def create_server_app(client: Graveler, config: ServerConfig) -> ASGIApp:
    """The server's application over an open client."""
    auth = authenticator_for(client)
    gateway = Gateway(
        client,
        auth,
        region=config.region,
        domain=config.domain,
        namespace_root=config.namespace_root,
        verify_reads=config.verify_reads,
        body_timeout=config.body_timeout,
    )
    apps: dict[str, ASGIApp] = {
        routing.S3: gateway,
        routing.UI: signed_in_ui(client, auth, config),
        routing.ICEBERG: _mounted(
            routing.ICEBERG_PREFIX, _optional(ICEBERG_MODULE, client, auth, _no_iceberg)
        ),
        routing.API: create_lakefs_api(client, auth, config.namespace_root),
        routing.HEALTH: _health,
    }
    domain = config.domain

    def interface_of(scope: dict[str, Any]) -> str:
        return routing.interface_of(scope, domain)

    async def dispatch(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] == "http":
            record = record_of(scope)  # Observed decided the interface already
            await apps[record.interface if record else interface_of(scope)](scope, receive, send)

    return Observed(dispatch, interface_of)


def _mounted(prefix: str, app: ASGIApp) -> ASGIApp:
    """``app`` seeing paths below ``prefix`` (its ``root_path``)."""

    async def mounted(scope: dict[str, Any], receive: Any, send: Any) -> None:
        child = dict(
            scope,
            root_path=scope.get("root_path", "") + prefix,
            path=scope["path"][len(prefix) :] or "/",
        )
        await app(child, receive, send)

    return mounted


def _optional(module_name: str, client: Graveler, auth: Authenticator, missing: ASGIApp) -> Any:
    """``module_name.create_app(client, auth)``, or ``missing`` when the module (or what it
    needs) is not installed."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return missing
    return module.create_app(client, auth)


async def _no_iceberg(scope: dict[str, Any], receive: Any, send: Any) -> None:
    error = {"message": "this server has no Iceberg catalog", "type": "NotFound", "code": 404}
    await _json(send, 404, {"error": error, "request_id": request_id()})


async def _health(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["method"] in ("GET", "HEAD"):
        await _json(send, 200, {"status": "ok"}, head=scope["method"] == "HEAD")
    else:
        await _json(send, 405, {"message": f"{scope['method']} is not allowed on /_health"})


async def _json(send: Any, status: int, doc: dict[str, Any], *, head: bool = False) -> None:
    body = json.dumps(doc).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
