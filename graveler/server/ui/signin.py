"""The web UI's sign-in: an access key and its secret, then a session cookie.

:func:`signed_in_ui` wraps the UI application (:func:`graveler.server.ui.app.create_app`) in a gate
that knows who is signed in (the ``graveler_session`` cookie: a token of
:class:`~graveler.server.auth.Authenticator`, HttpOnly, SameSite=Strict, 12 hours) and puts
the principal in the request scope, where the UI reads it to decide on write actions
(:meth:`graveler.server.ui.context.UI.writes_allowed`).

On a loopback address anonymous visitors get the pages read-only and sign in to write.
Beyond loopback every page needs a signed-in visitor: GET and HEAD are sent to the sign-in
page, anything else gets 401. A key limited to some repositories sees only those
(403 elsewhere).
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from graveler.client import Graveler
from graveler.core.errors import AuthenticationFailed
from graveler.server.auth import SESSION, Authenticator, Principal
from graveler.server.config import ServerConfig
from graveler.server.listen import allowed_hosts, is_loopback
from graveler.server.observe import note, request_id
from graveler.server.ui.app import create_app
from graveler.server.ui.context import PRINCIPAL, UIOptions

COOKIE = "graveler_session"
SESSION_SECONDS = 12 * 3600
MAX_FORM = 16 << 10
#: Paths open without signing in.
_OPEN = ("/sign-in", "/static/")


def signed_in_ui(client: Graveler, auth: Authenticator, config: ServerConfig) -> Any:
    options = UIOptions(
        allow_writes=config.ui_writes, sign_in=True, csrf_secret=auth.derived_key("ui-csrf")
    )
    ui = create_app(client, options, allowed_hosts=allowed_hosts(config.host))
    return SessionGate(ui, auth, require_sign_in=not is_loopback(config.host))


class SessionGate:
    """ASGI middleware: sign-in and sign-out pages, the session cookie, the access rules."""

    def __init__(self, app: Any, auth: Authenticator, *, require_sign_in: bool) -> None:
        self.app = app
        self.auth = auth
        self.require_sign_in = require_sign_in

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path == "/sign-in":
            await self._sign_in(scope, receive, send)
            return
        if path == "/sign-out" and scope["method"] == "POST":
            await _redirect(send, _root(scope) + "/", clear=True, scope=scope)
            return
        principal = self._principal(scope)
        repo = _repository_of(path)
        note(scope, access_key_id=principal.access_key_id if principal else "", repository=repo)
        if principal is None and self.require_sign_in and not path.startswith(_OPEN):
            if scope["method"] in ("GET", "HEAD"):
                await _redirect(send, _root(scope) + "/sign-in?next=" + _here(scope))
            else:
                await _page(send, 401, "Sign in first: this server needs an access key.")
            return
        if principal is not None and repo is not None and not principal.may_read(repo):
            await _page(send, 403, f"Access key {principal.access_key_id} may not read {repo!r}.")
            return
        inner = dict(scope, **{PRINCIPAL: principal})
        await self.app(inner, receive, send)
        _note_page(scope, inner)

    def _principal(self, scope: dict[str, Any]) -> Principal | None:
        token = _cookie(scope, COOKIE)
        if not token:
            return None
        try:
            return self.auth.by_token(token, SESSION)
        except AuthenticationFailed:
            return None

    async def _sign_in(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["method"] != "POST":
            await _form(send, 200, "", _next(scope))
            return
        if not _same_origin(scope):
            await _page(send, 403, "The sign-in form was posted from another site.")
            return
        fields = parse_qs((await _read(receive)).decode("utf-8", "replace"))
        key_id = fields.get("access_key_id", [""])[0].strip()
        secret = fields.get("secret_access_key", [""])[0].strip()
        target = _safe_next(fields.get("next", ["/"])[0], _root(scope))
        try:
            principal = self.auth.by_secret(key_id, secret)
        except AuthenticationFailed:
            await _form(send, 401, "Wrong access key or secret.", target)
            return
        token = self.auth.issue_token(principal, SESSION, SESSION_SECONDS)
        await _redirect(send, target, cookie=token, scope=scope)


def _here(scope: dict[str, Any]) -> str:
    """The page asked for, path and query, as the value of a ``next`` parameter."""
    query = scope.get("query_string", b"").decode("latin-1")
    return quote(scope["path"] + ("?" + query if query else ""), safe="/")


def _note_page(scope: dict[str, Any], inner: dict[str, Any]) -> None:
    """The access log's operation (the page's function) and ref of a page served."""
    params = inner.get("path_params") or {}
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    ref = params.get("ref") or (query.get("ref") or query.get("branch") or [""])[0]
    note(scope, operation=getattr(inner.get("endpoint"), "__name__", ""), ref=str(ref))


def _repository_of(path: str) -> str | None:
    parts = path.split("/")
    return parts[2] if len(parts) > 2 and parts[1] == "repos" and parts[2] else None


def _root(scope: dict[str, Any]) -> str:
    return str(scope.get("root_path", "")).rstrip("/")


def _next(scope: dict[str, Any]) -> str:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return _safe_next(query.get("next", ["/"])[0], _root(scope))


def _safe_next(target: str, root: str) -> str:
    """A local path to go to after signing in (never another site)."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return root + "/"
    return target if target.startswith(root + "/") or not root else root + target


def _same_origin(scope: dict[str, Any]) -> bool:
    origin = _header(scope, b"origin")
    if origin is None or origin == "null":
        return origin is None
    host = _header(scope, b"host") or ""
    return urlsplit(origin).netloc == host


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _cookie(scope: dict[str, Any], name: str) -> str | None:
    header = _header(scope, b"cookie")
    if header is None:
        return None
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def _read(receive: Any) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += bytes(message.get("body", b""))
        if len(body) > MAX_FORM:
            return b""
        if not message.get("more_body", False):
            return body


async def _redirect(
    send: Any, target: str, *, cookie: str | None = None, clear: bool = False, scope: Any = None
) -> None:
    headers = [(b"location", target.encode()), (b"cache-control", b"no-store")]
    path = (_root(scope) or "/") if scope is not None else "/"
    if cookie is not None:
        value = (
            f"{COOKIE}={cookie}; Path={path}; HttpOnly; SameSite=Strict; Max-Age={SESSION_SECONDS}"
        )
        headers.append((b"set-cookie", value.encode()))
    if clear:
        headers.append(
            (
                b"set-cookie",
                f"{COOKIE}=; Path={path}; HttpOnly; SameSite=Strict; Max-Age=0".encode(),
            )
        )
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def _page(send: Any, status: int, message: str) -> None:
    body = _html(
        "graveler",
        f"<p class='error'>{html.escape(message)}</p><p><a href='/sign-in'>Sign in</a></p>"
        f"<p class='request-id'>Request ID {request_id()}</p>",
    )
    await _send_html(send, status, body)


async def _form(send: Any, status: int, error: str, target: str) -> None:
    note = f"<p class='error'>{html.escape(error)}</p>" if error else ""
    body = _html(
        "Sign in",
        f"""<h1>Sign in</h1>{note}
<form method="post" action="/sign-in">
<input type="hidden" name="next" value="{html.escape(target)}">
<label>Access key ID <input name="access_key_id" autocomplete="username" required></label>
<label>Secret access key <input name="secret_access_key" type="password"
 autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>
<p>Create a key with <code>graveler credentials create</code>.</p>""",
    )
    await _send_html(send, status, body)


def _html(title: str, content: str) -> bytes:
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}"
        f" · graveler</title><link rel='stylesheet' href='/static/graveler.css'></head>"
        f"<body><main class='signin'>{content}</main></body></html>"
    ).encode()


async def _send_html(send: Any, status: int, body: bytes) -> None:
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"cache-control", b"no-store"),
        (
            b"content-security-policy",
            b"default-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'",
        ),
        (b"x-content-type-options", b"nosniff"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
