"""The FastAPI application: pages, static assets, security headers and error pages.

    app = create_app(Graveler(home=".graveler"))                 # read-only
    app = create_app(open_client, UIOptions(allow_writes=True))   # opened on first request

Every response carries a Content-Security-Policy that allows scripts, styles and images from
this server only (htmx ships in ``static/``: no CDN), forbids framing by other sites and
posting forms elsewhere. Errors become pages with the error's message (graveler's messages
name no secrets) and an HTTP status: 400 bad input, 404 not found, 409 conflict, 500 else;
an unexpected exception shows no traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import Response

from graveler.client import Graveler
from graveler.core.errors import GravelerError, StorageError
from graveler.server.observe import request_id
from graveler.server.ui import actions, pages_compare, pages_history, pages_objects, pages_repos
from graveler.server.ui.context import UI, UIOptions, ui_of
from graveler.server.ui.csrf import CsrfError

log = logging.getLogger("graveler.ui")

CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
)
_STATUS = {2: 400, 3: 404, 4: 409}


def create_app(
    client: Graveler | Callable[[], Graveler],
    options: UIOptions | None = None,
    *,
    allowed_hosts: Sequence[str] | None = None,
    dependencies: Sequence[Any] = (),
) -> FastAPI:
    """The UI over ``client`` (or a function opening one on the first request).

    ``allowed_hosts``: the Host header values accepted (``127.0.0.1``, ``localhost``...), a
    guard against DNS rebinding for a server on the loopback interface; None accepts any.
    ``dependencies``: FastAPI dependencies run before every page (the Airflow plugin passes
    Airflow's authentication)."""
    app = FastAPI(
        title="graveler UI",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=list(dependencies),
    )
    app.state.ui = UI(client, options or UIOptions())
    for module in (pages_repos, pages_history, pages_compare, pages_objects, actions):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(packages=[("graveler.server.ui", "static")]), name="static")
    _install_error_pages(app)
    app.middleware("http")(_security_headers)
    if allowed_hosts is not None:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    return app


async def _security_headers(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    response = await call_next(request)
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def _install_error_pages(app: FastAPI) -> None:
    def page(request: Request, status: int, title: str, message: str) -> Response:
        return ui_of(request).render(
            request,
            "error.html",
            status=status,
            title=title,
            message=message,
            request_id=request_id(),
        )

    @app.exception_handler(GravelerError)
    async def graveler_error(request: Request, exc: GravelerError) -> Response:
        status = 502 if isinstance(exc, StorageError) else _STATUS.get(exc.exit_code, 500)
        text = " ".join(str(exc).split()) or type(exc).__name__
        return page(request, status, _title(status), text)

    @app.exception_handler(CsrfError)
    async def csrf_error(request: Request, exc: CsrfError) -> Response:
        return page(request, 403, "Request refused", str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        fields = sorted({".".join(str(p) for p in e["loc"][1:]) for e in exc.errors()})
        return page(request, 400, "Bad request", f"missing or invalid: {', '.join(fields)}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        detail = exc.detail if isinstance(exc.detail, str) else ""
        return page(request, exc.status_code, _title(exc.status_code), detail)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.error("%s %s failed: %s", request.method, request.url.path, type(exc).__name__)
        return page(request, 500, "Internal error", "The server failed to answer; see its log.")


def _title(status: int) -> str:
    return {
        400: "Bad request",
        403: "Forbidden",
        404: "Not found",
        405: "Method not allowed",
        409: "Conflict",
        502: "Storage error",
    }.get(status, "Error")
