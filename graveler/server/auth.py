"""Who is asking, and what they may do.

A :class:`Principal` is an access key as the server sees it: the repositories it reaches,
whether it may write, whether it may create repositories. :class:`Authenticator` finds the
principal of a key ID (with its secret, for checking signatures) and issues and checks the
server's own bearer tokens: the Iceberg catalog's OAuth2 tokens, the web UI's session
cookie and the lakeFS API's login tokens. Tokens are stateless (HMAC-SHA256 over the key
ID, a purpose and an expiry, under a key derived from the server's key), so every worker and
replica accepts them; a token stops working when its key is deleted.

Keys are looked up in the database at most once per :data:`CACHE_SECONDS` per worker: a
deleted key is refused everywhere within that time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass

from graveler.core.errors import AccessDenied, AuthenticationFailed, NotFound
from graveler.core.model import AccessKey
from graveler.server.credentials import Credentials

CACHE_SECONDS = 5.0
#: Purposes a token may be issued for.
ICEBERG = "iceberg"
SESSION = "session"
LAKEFS = "lakefs"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller."""

    access_key_id: str
    repositories: frozenset[str] | None
    read_only: bool
    admin: bool

    @classmethod
    def of(cls, key: AccessKey) -> Principal:
        repos = None if key.repositories is None else frozenset(key.repositories)
        return cls(key.access_key_id, repos, key.read_only, key.admin)

    def may_read(self, repository: str) -> bool:
        return self.repositories is None or repository in self.repositories

    def may_write(self, repository: str) -> bool:
        return not self.read_only and self.may_read(repository)

    def require_read(self, repository: str) -> None:
        if not self.may_read(repository):
            raise AccessDenied(f"access key {self.access_key_id} may not read {repository!r}")

    def require_write(self, repository: str) -> None:
        self.require_read(repository)
        if self.read_only:
            raise AccessDenied(f"access key {self.access_key_id} is read-only")

    def require_admin(self) -> None:
        if not self.admin:
            raise AccessDenied(f"access key {self.access_key_id} is not an admin key")


class Authenticator:
    """Principals by key ID, secrets and tokens (see the module docstring)."""

    def __init__(self, credentials: Credentials, server_key: bytes) -> None:
        self._credentials = credentials
        self._server_key = server_key
        self._token_key = self.derived_key("graveler-tokens")
        self._cache: dict[str, tuple[float, Principal, str]] = {}
        self._lock = threading.Lock()

    def derived_key(self, purpose: str) -> bytes:
        """A key for ``purpose`` derived from the server's key: the same on every worker and
        replica of a deployment."""
        return hmac.new(self._server_key, purpose.encode(), hashlib.sha256).digest()

    def lookup(self, access_key_id: str) -> tuple[Principal, str]:
        """The principal of ``access_key_id`` and its secret; AuthenticationFailed when there
        is no such key."""
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(access_key_id)
        if hit is not None and now - hit[0] < CACHE_SECONDS:
            return hit[1], hit[2]
        try:
            key = self._credentials.store.get(access_key_id)
        except NotFound:
            raise AuthenticationFailed(f"unknown access key {access_key_id!r:.40}") from None
        found = (now, Principal.of(key), self._credentials.secret_of(key))
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[access_key_id] = found
        return found[1], found[2]

    def by_secret(self, access_key_id: str, secret: str) -> Principal:
        """The principal whose key and secret these are; AuthenticationFailed otherwise (the
        same error whether the key or the secret is wrong)."""
        try:
            principal, expected = self.lookup(access_key_id)
        except AuthenticationFailed:
            expected, principal = "", None
        if principal is None or not hmac.compare_digest(expected.encode(), secret.encode()):
            raise AuthenticationFailed("wrong access key or secret")
        return principal

    def issue_token(self, principal: Principal, purpose: str, ttl_seconds: int) -> str:
        """A token naming ``principal`` for ``purpose``, valid for ``ttl_seconds``."""
        body = json.dumps(
            {"k": principal.access_key_id, "p": purpose, "e": int(time.time()) + ttl_seconds},
            separators=(",", ":"),
        ).encode()
        mac = hmac.new(self._token_key, body, hashlib.sha256).digest()
        return _b64(body) + "." + _b64(mac)

    def by_token(self, token: str, purpose: str) -> Principal:
        """The principal a token of ours names; AuthenticationFailed when it is malformed,
        forged, for another purpose, expired, or its key is gone."""
        try:
            body_text, mac_text = token.split(".")
            body, mac = _unb64(body_text), _unb64(mac_text)
        except ValueError:
            raise AuthenticationFailed("malformed token") from None
        expected = hmac.new(self._token_key, body, hashlib.sha256).digest()
        if not hmac.compare_digest(mac, expected):
            raise AuthenticationFailed("invalid token")
        claims = json.loads(body)
        if claims.get("p") != purpose:
            raise AuthenticationFailed("token issued for another purpose")
        if int(claims.get("e", 0)) < time.time():
            raise AuthenticationFailed("token expired")
        return self.lookup(str(claims.get("k", "")))[0]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise ValueError("not base64") from exc
