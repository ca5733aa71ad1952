"""The one ASGI application of ``graveler serve``: S3 gateway, Iceberg catalog, lakeFS's
REST API and web UI on one port, sharing one client, one authenticator and one
configuration.

Routing: a request that carries an AWS signature (``Authorization: AWS4-HMAC-SHA256 ...`` or
a presigned ``X-Amz-*`` query), or otherwise looks like an S3 call (an ``x-amz-*`` header, an
S3 sub-resource in the query, a virtual-host bucket), goes to the gateway, which refuses
unsigned ones; ``/api/v1`` and below go to lakeFS's REST API (:mod:`graveler.server.lakefs`,
errors as lakeFS's JSON); ``/iceberg/api`` goes to the Iceberg REST catalog; the rest to the
web UI behind its sign-in (:mod:`graveler.server.ui.signin`).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from graveler.client import Graveler
from graveler.server.auth import Authenticator
from graveler.server.config import ServerConfig
from graveler.server.credentials import Credentials, server_key
from graveler.server.lakefs import create_app as create_lakefs_api
from graveler.server.s3.app import Gateway
from graveler.server.ui.signin import signed_in_ui

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
ICEBERG_PREFIX = "/iceberg/api"
#: The module that provides the Iceberg REST catalog (``create_app(client, authenticator)``).
ICEBERG_MODULE = "graveler.server.catalog.rest"
#: Where lakeFS's REST API is served.
LAKEFS_PREFIX = "/api/v1"
#: User agents of S3 clients (an unsigned request from one gets S3's AccessDenied, not a page).
_S3_AGENTS = (b"boto3", b"botocore", b"aws-cli", b"aws-sdk", b"aws-crt", b"s3fs", b"hadoop")
_S3_QUERY = {
    "list-type",
    "uploads",
    "uploadId",
    "partNumber",
    "delete",
    "location",
    "versioning",
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Signature",
    "AWSAccessKeyId",
}


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
    )
    ui = signed_in_ui(client, auth, config)
    iceberg = _iceberg(client, auth)
    lakefs = create_lakefs_api(client, auth, config.namespace_root)
    domain = config.domain

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] != "http":
            return
        elif is_s3(scope, domain):
            await gateway(scope, receive, send)
        elif scope["path"] == LAKEFS_PREFIX or scope["path"].startswith(LAKEFS_PREFIX + "/"):
            await lakefs(scope, receive, send)
        elif scope["path"] == ICEBERG_PREFIX or scope["path"].startswith(ICEBERG_PREFIX + "/"):
            child = dict(
                scope,
                root_path=scope.get("root_path", "") + ICEBERG_PREFIX,
                path=scope["path"][len(ICEBERG_PREFIX) :] or "/",
            )
            await iceberg(child, receive, send)
        else:
            await ui(scope, receive, send)

    return app


def is_s3(scope: dict[str, Any], domain: str | None) -> bool:
    for name, value in scope["headers"]:
        if name == b"authorization" and value[:4] in (b"AWS4", b"AWS "):
            return True
        if name.startswith(b"x-amz-"):
            return True
        if name == b"user-agent" and value.lower().startswith(_S3_AGENTS):
            return True
        if domain and name == b"host" and value.split(b":")[0].endswith(b"." + domain.encode()):
            return True
    query = scope.get("query_string", b"")
    if query:
        names = {part.split(b"=", 1)[0].decode("latin-1") for part in query.split(b"&")}
        return bool(names & _S3_QUERY)
    return False


def _iceberg(client: Graveler, auth: Authenticator) -> ASGIApp:
    try:
        module = importlib.import_module(ICEBERG_MODULE)
    except ImportError:
        return _not_served
    app: ASGIApp = module.create_app(client, auth)
    return app


async def _not_served(scope: dict[str, Any], receive: Any, send: Any) -> None:
    body = json.dumps(
        {
            "error": {
                "message": "this server has no Iceberg catalog",
                "type": "NotFound",
                "code": 404,
            }
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 404,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
