"""The Iceberg REST catalog of ``graveler serve`` (mounted at ``/iceberg/api``).

* **Warehouse = repository.** ``GET /v1/config?warehouse=REPO`` answers with the prefix
  ``REPO``; every other route is ``/v1/REPO/...``.
* **Namespaces start with a ref:** ``catalog.main.sales.orders`` is table ``orders`` of
  namespace ``sales`` on branch ``main``; a tag or commit ID reads the table as it was, and
  refuses writes (403). Listing the top level lists the branches.
* **Auth:** ``POST /v1/oauth/tokens`` exchanges an access key (``client_id``) and its secret
  (``client_secret``) for a bearer token (the OAuth2 client-credentials grant; the
  token-exchange grant refreshes one), which every other route requires. The key's rights
  apply: reading needs read access to the repository, changing needs write access.
* **Errors** follow the spec's error model (:mod:`graveler.server.catalog.errors`).

Stateless: every request reads the database and the object store, so any number of workers
serve the same catalog. Handlers run on worker threads (:mod:`graveler.server.catalog.handlers`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from graveler.client import Graveler
from graveler.core.errors import AuthenticationFailed, GravelerError
from graveler.server.auth import ICEBERG, Authenticator, Principal
from graveler.server.catalog import handlers as h
from graveler.server.catalog.errors import RestError, body, classify
from graveler.server.observe import note

TOKEN_SECONDS = 3600
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JSON = "application/json"

Handler = Callable[[h.Call], h.Reply]
#: (method, path, handler, needs write access, is a commit)
ROUTES: list[tuple[str, str, Handler, bool, bool]] = [
    ("GET", "/namespaces", h.list_namespaces, False, False),
    ("POST", "/namespaces", h.create_namespace, True, False),
    ("GET", "/namespaces/{namespace}", h.load_namespace, False, False),
    ("HEAD", "/namespaces/{namespace}", h.namespace_exists, False, False),
    ("DELETE", "/namespaces/{namespace}", h.drop_namespace, True, False),
    ("POST", "/namespaces/{namespace}/properties", h.update_properties, True, False),
    ("GET", "/namespaces/{namespace}/tables", h.list_tables, False, False),
    ("POST", "/namespaces/{namespace}/tables", h.create_table, True, True),
    ("POST", "/namespaces/{namespace}/register", h.register_table, True, True),
    ("GET", "/namespaces/{namespace}/tables/{table}", h.load_table, False, False),
    ("HEAD", "/namespaces/{namespace}/tables/{table}", h.table_exists, False, False),
    ("POST", "/namespaces/{namespace}/tables/{table}", h.commit_table, True, True),
    ("DELETE", "/namespaces/{namespace}/tables/{table}", h.drop_table, True, True),
    ("POST", "/namespaces/{namespace}/tables/{table}/metrics", h.report_metrics, False, False),
    ("POST", "/tables/rename", h.rename_table, True, True),
    ("POST", "/transactions/commit", h.commit_transaction, True, True),
]
ENDPOINTS = [f"{m} /v1/{{prefix}}{p}" for m, p, *_ in ROUTES]


def create_app(client: Graveler, authenticator: Authenticator) -> Any:
    """The catalog's ASGI application over one client (one per server worker)."""
    api = _Api(client, authenticator)
    routes = [
        Route("/v1/config", api.config, methods=["GET"]),
        Route("/v1/oauth/tokens", api.token, methods=["POST"]),
    ]
    paths: dict[str, list[tuple[str, Handler, bool, bool]]] = {}
    for method, path, handler, write, commit in ROUTES:
        paths.setdefault(path, []).append((method, handler, write, commit))
    for path, methods in paths.items():
        routes.append(
            Route("/v1/{prefix}" + path, api.dispatcher(methods), methods=[m[0] for m in methods])
        )
    return Starlette(routes=routes, exception_handlers={HTTPException: _http_error})


class _Api:
    def __init__(self, client: Graveler, auth: Authenticator) -> None:
        self.client = client
        self.auth = auth

    # --- configuration and tokens ---------------------------------------------------------------

    async def config(self, request: Request) -> Response:
        def work() -> Response:
            principal = self._principal(request)
            warehouse = request.query_params.get("warehouse", "")
            if not warehouse:
                raise RestError(
                    400, "BadRequestException", "set the catalog's warehouse to a repository name"
                )
            principal.require_read(warehouse)
            self.client.repository(warehouse)
            doc = {"defaults": {}, "overrides": {"prefix": warehouse}, "endpoints": ENDPOINTS}
            return _json(200, doc)

        return await _guarded(work)

    async def token(self, request: Request) -> Response:
        raw = await request.body()

        def work() -> Response:
            form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
            grant = form.get("grant_type", "")
            if grant == "client_credentials":
                principal = self._client_credentials(request, form)
            elif grant == TOKEN_EXCHANGE:
                principal = self.auth.by_token(form.get("subject_token", ""), ICEBERG)
            else:
                return _oauth_error(400, "unsupported_grant_type", f"grant {grant[:60]!r}")
            token = self.auth.issue_token(principal, ICEBERG, TOKEN_SECONDS)
            return _json(
                200,
                {
                    "access_token": token,
                    "token_type": "bearer",
                    "expires_in": TOKEN_SECONDS,
                    "issued_token_type": ACCESS_TOKEN_TYPE,
                },
            )

        try:
            return await run_in_threadpool(work)
        except AuthenticationFailed as exc:
            return _oauth_error(401, "invalid_client", str(exc))

    def _client_credentials(self, request: Request, form: dict[str, str]) -> Principal:
        key, secret = form.get("client_id", ""), form.get("client_secret", "")
        basic = request.headers.get("authorization", "")
        if not key and basic.lower().startswith("basic "):
            import base64

            try:
                key, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
            except ValueError:
                raise AuthenticationFailed("malformed basic credentials") from None
        return self.auth.by_secret(key, secret)

    # --- catalog routes ---------------------------------------------------------------------------

    def dispatcher(self, methods: list[tuple[str, Handler, bool, bool]]) -> Any:
        by_method = {m: (handler, write, commit) for m, handler, write, commit in methods}

        async def endpoint(request: Request) -> Response:
            handler, write, commit = by_method[request.method]
            namespace = str(request.path_params.get("namespace", ""))
            note(
                request.scope,
                operation=handler.__name__,
                repository=str(request.path_params["prefix"]),
                ref=namespace.split("\x1f", 1)[0],
            )
            raw = await request.body() if request.method in ("POST", "PUT") else b""
            if len(raw) > h.MAX_BODY:
                return _error(413, "BadRequestException", "request body too large")

            def work() -> Response:
                status, reply = handler(self._call(request, raw, write))
                return _reply(request, status, reply)

            return await _guarded(work, committing=commit)

        return endpoint

    def _call(self, request: Request, raw: bytes, write: bool) -> h.Call:
        principal = self._principal(request)
        prefix = request.path_params["prefix"]
        if write:
            principal.require_write(prefix)
        else:
            principal.require_read(prefix)
        repo = self.client.repository(prefix)
        params = {k: str(v) for k, v in request.path_params.items()}
        return h.Call(repo, principal, params, dict(request.query_params), raw)

    def _principal(self, request: Request) -> Principal:
        header = request.headers.get("authorization", "")
        if not header.lower().startswith("bearer "):
            raise AuthenticationFailed(
                "no bearer token: get one from /v1/oauth/tokens with an access key and secret"
            )
        principal = self.auth.by_token(header[7:].strip(), ICEBERG)
        note(request.scope, access_key_id=principal.access_key_id)
        return principal


async def _guarded(work: Callable[[], Response], *, committing: bool = False) -> Response:
    try:
        return await run_in_threadpool(work)
    except (GravelerError, RestError, ValueError) as exc:
        return _error(*classify(exc, committing=committing))
    except Exception as exc:
        return _error(*classify(exc, committing=committing))


def _reply(request: Request, status: int, reply: bytes | dict[str, Any] | None) -> Response:
    if reply is None or request.method == "HEAD":
        return Response(status_code=status)
    data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
    return Response(data, status_code=status, media_type=JSON)


def _json(status: int, doc: dict[str, Any]) -> Response:
    return Response(json.dumps(doc).encode(), status_code=status, media_type=JSON)


def _error(status: int, kind: str, message: str) -> Response:
    return Response(body(status, kind, message), status_code=status, media_type=JSON)


def _oauth_error(status: int, error: str, description: str) -> Response:
    return _json(status, {"error": error, "error_description": description})


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    kind = {404: "NoSuchEndpointException", 405: "UnsupportedOperationException"}.get(
        status, "BadRequestException"
    )
    detail = getattr(exc, "detail", "") or "error"
    message = f"{request.method} {request.url.path}: {detail}"
    return _error(406 if status == 405 else status, kind, message)
