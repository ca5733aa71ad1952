"""What every page handler shares: the graveler client, the options, templates and CSRF.

One :class:`UI` lives in ``app.state.ui``. Pages call :meth:`UI.render`, which adds the
common template context (links under the mount path, whether writes are allowed, the CSRF
token) and, for htmx requests, lets templates send only the fragment that changes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.server.ui.csrf import COOKIE, Csrf
from graveler.server.ui.links import Links
from graveler.server.ui.summary import SLICE_SECONDS, SummaryCache
from graveler.server.ui.templating import make_environment

#: Where the sign-in layer puts the signed-in principal in the ASGI scope.
PRINCIPAL = "graveler.principal"
#: Rows per page of every paged listing (objects, changes, branches, log).
PAGE_SIZE = 100
LOG_PAGE_SIZE = 40


@dataclass(frozen=True)
class UIOptions:
    """How the app behaves. ``allow_writes`` adds the merge, revert and delete-branch
    actions; ``title`` names the deployment; ``page_size`` / ``log_page_size`` are rows per
    page; ``count_seconds`` is how long one request counts a comparison's changes."""

    allow_writes: bool = False
    #: Writes only for a signed-in caller whose key may write the repository (``graveler
    #: serve`` and ``graveler ui``: the principal is put in the request scope under
    #: ``graveler.principal`` by :mod:`graveler.server.ui.signin`).
    sign_in: bool = False
    #: The key of the write forms' CSRF tokens; servers with several workers must share one
    #: (``graveler serve`` derives it from its server key). None: random, per process.
    csrf_secret: bytes | None = None
    title: str = "graveler"
    page_size: int = PAGE_SIZE
    log_page_size: int = LOG_PAGE_SIZE
    count_seconds: float = SLICE_SECONDS


class UI:
    """The state of one app. ``client`` is a connected :class:`Graveler` or a function that
    opens one (called once, on the first request: the Airflow plugin must not connect
    while Airflow merely loads plugins)."""

    def __init__(self, client: Graveler | Callable[[], Graveler], options: UIOptions) -> None:
        self._client = client if isinstance(client, Graveler) else None
        self._open = None if isinstance(client, Graveler) else client
        self._lock = threading.Lock()
        self.options = options
        self.env = make_environment()
        self.csrf = Csrf(options.csrf_secret)
        self.summaries = SummaryCache()

    @property
    def client(self) -> Graveler:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    assert self._open is not None
                    self._client = self._open()
        return self._client

    def repository(self, name: str) -> Repository:
        """A handle on repository ``name``; RepositoryNotFound (a 404 page) otherwise."""
        return self.client.repository(name)

    def writes_allowed(self, request: Request, repo: str | None = None) -> bool:
        """Whether this request may use write actions (on ``repo``, when given)."""
        if not self.options.allow_writes:
            return False
        if not self.options.sign_in:
            return True
        principal = request.scope.get(PRINCIPAL)
        if principal is None or principal.read_only:
            return False
        name = repo if repo is not None else request.path_params.get("repo")
        return name is None or bool(principal.may_write(name))

    def render(
        self, request: Request, template: str, *, status: int = 200, **context: Any
    ) -> HTMLResponse:
        """``template`` rendered with ``context`` plus the common context."""
        writes = self.writes_allowed(request)
        cookie = request.cookies.get(COOKIE) if writes else None
        fresh = self.csrf.new_cookie() if writes and not cookie else None
        pair = cookie or fresh
        token = self.csrf.token(pair) if pair else ""
        common = {
            "request": request,
            "links": links_for(request),
            "options": self.options,
            "allow_writes": writes,
            "signed_in": request.scope.get(PRINCIPAL),
            "sign_in": self.options.sign_in,
            "csrf_token": token,
            "htmx": is_htmx(request),
        }
        html = self.env.get_template(template).render({**common, **context})
        response = HTMLResponse(html, status_code=status)
        if fresh:
            response.set_cookie(
                COOKIE,
                fresh,
                httponly=True,
                samesite="strict",
                path=request.scope.get("root_path") or "/",
            )
        return response


def ui_of(request: Request) -> UI:
    ui: UI = request.app.state.ui
    return ui


def links_for(request: Request) -> Links:
    """Links under the path the app is mounted at (``/graveler`` inside Airflow)."""
    return Links(request.scope.get("root_path", ""))


def is_htmx(request: Request) -> bool:
    """Whether htmx sent the request (it then swaps in a fragment, not a whole page)."""
    return request.headers.get("hx-request") == "true"
