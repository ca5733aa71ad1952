"""Who calls: lakeFS's three ways of authenticating an API request, over graveler's keys.

* HTTP basic authentication with an access key ID and its secret (what lakectl and the SDKs
  send when configured with a key);
* ``Authorization: Bearer TOKEN`` with a token from ``POST /auth/login``;
* lakeFS's session cookie ``internal_auth_session``, which ``/auth/login`` sets, holding the
  same token.

Tokens are :class:`~graveler.server.auth.Authenticator` tokens for the purpose ``lakefs``:
stateless, valid on every worker, dead when their key is deleted. Credentials that are
present but wrong are a 401, as in lakeFS; none at all leave the caller unknown (public
operations run, the rest answer 401). Key lookups are cached by the authenticator, so a call
costs one HMAC comparison.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping

from graveler.core.errors import AuthenticationFailed
from graveler.server.auth import LAKEFS, Authenticator, Principal

#: lakeFS's session cookie.
COOKIE = "internal_auth_session"
#: How long a login token lasts (lakeFS's default login duration: a week).
TOKEN_SECONDS = 7 * 24 * 3600


def principal_of(auth: Authenticator, headers: Mapping[str, str]) -> Principal | None:
    """The caller named by the request's credentials, None when it carries none; raises
    AuthenticationFailed when they are wrong."""
    header = headers.get("authorization", "")
    if header:
        scheme, _, value = header.strip().partition(" ")
        kind = scheme.lower()
        if kind == "basic":
            key, secret = _basic(value.strip())
            return auth.by_secret(key, secret)
        if kind == "bearer":
            return auth.by_token(value.strip(), LAKEFS)
    token = cookie(headers.get("cookie", ""), COOKIE)
    if token:
        return auth.by_token(token, LAKEFS)
    if header:
        raise AuthenticationFailed("unsupported authorization scheme: use Basic or Bearer")
    return None


def _basic(value: str) -> tuple[str, str]:
    try:
        text = base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise AuthenticationFailed("malformed basic credentials") from None
    key, sep, secret = text.partition(":")
    if not sep:
        raise AuthenticationFailed("malformed basic credentials")
    return key, secret


def cookie(header: str, name: str) -> str | None:
    """The value of cookie ``name`` in a Cookie header."""
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value.strip('"')
    return None


def login_cookie(token: str) -> str:
    """The Set-Cookie value of a login: the token as lakeFS's session cookie."""
    return f"{COOKIE}={token}; Path=/; Max-Age={TOKEN_SECONDS}; HttpOnly; SameSite=Lax"
