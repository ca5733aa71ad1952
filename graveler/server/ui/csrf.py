"""Cross-site request forgery protection for the UI's write actions.

Double submit, signed: a page that shows a write form gives the browser a random cookie
(``SameSite=Strict``, ``HttpOnly``) and puts HMAC(server secret, cookie) into the form. A
POST is accepted only when

* the cookie is present and the form's token is the HMAC of it (constant-time compare), so
  another site can neither read nor forge the pair; and
* the request does not say it comes from elsewhere: ``Sec-Fetch-Site`` (when sent) is
  ``same-origin``, and ``Origin`` (else ``Referer``, when sent) names this server.

The secret is made when the app starts, so tokens of an earlier process are refused.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

from starlette.requests import Request

COOKIE = "graveler_csrf"
FIELD = "csrf_token"


class CsrfError(Exception):
    """A write request that failed the CSRF checks; the message says which (no secret)."""


class Csrf:
    """Issues and checks the tokens of one app (one random secret)."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    def token(self, cookie: str) -> str:
        """The form token that goes with ``cookie``."""
        return hmac.new(self._secret, cookie.encode(), hashlib.sha256).hexdigest()

    @staticmethod
    def new_cookie() -> str:
        return secrets.token_urlsafe(32)

    def check(self, request: Request, form_token: str | None) -> None:
        """Raise CsrfError unless ``request`` (a POST) carries a valid token pair and comes
        from this origin."""
        _check_origin(request)
        cookie = request.cookies.get(COOKIE)
        if not cookie:
            raise CsrfError("the form's security cookie is missing: reload the page and retry")
        if not form_token or not hmac.compare_digest(self.token(cookie), form_token):
            raise CsrfError("the form's security token is invalid: reload the page and retry")


def _check_origin(request: Request) -> None:
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        raise CsrfError("the request came from another site")
    source = request.headers.get("origin") or request.headers.get("referer")
    if source is None:
        return
    parts = urlsplit(source)
    if (parts.scheme, parts.netloc) != (request.url.scheme, request.url.netloc):
        raise CsrfError("the request came from another site")
