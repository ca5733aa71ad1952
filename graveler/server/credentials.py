"""Access keys: created, listed and deleted here; stored in the refs database with the secret
encrypted (AES-256-GCM, the access key ID as associated data) under the server's key.

The server's key comes from ``GRAVELER_AUTH_ENCRYPT_KEY`` (any text; the same on every
server of a deployment). A deployment on the embedded SQLite database may leave it unset:
a random key is then created in ``<home>/auth.key`` (mode 0600) on first use. With
PostgreSQL the variable is required, since replicas on other machines must share it.

A secret access key is shown once, when created; afterwards it is only decrypted in memory to
check signatures, never printed, logged or returned.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from graveler.core import validate
from graveler.core.errors import AlreadyExists, InvalidArgument
from graveler.core.model import AccessKey

ENCRYPT_KEY_ENV = "GRAVELER_AUTH_ENCRYPT_KEY"
KEY_FILE = "auth.key"
#: Access key IDs look like AWS's: 20 upper-case letters and digits.
_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_ID_PREFIX = "GRVL"
#: What an imported key pair may look like (lakeFS's and AWS's keys fit): an ID of 16 to 128
#: upper-case letters and digits; a secret of 16 to 128 printable ASCII characters, no spaces.
_IMPORTED_ID = re.compile(r"[A-Z0-9]{16,128}")
_IMPORTED_SECRET = re.compile(r"[!-~]{16,128}")


@dataclass(frozen=True)
class NewKey:
    """A key as created: the only time its secret is seen."""

    access_key_id: str
    secret_access_key: str
    key: AccessKey

    def __repr__(self) -> str:
        return f"NewKey({self.access_key_id!r}, secret_access_key='***')"


def server_key(home: Path, database_url: str) -> bytes:
    """The 32-byte key that encrypts secrets (see the module docstring). Raises
    InvalidArgument when it is unset on a database other than SQLite."""
    text = os.environ.get(ENCRYPT_KEY_ENV, "")
    if text:
        return hashlib.sha256(b"graveler-auth-encrypt\0" + text.encode()).digest()
    if not database_url.startswith("sqlite"):
        raise InvalidArgument(
            f"set {ENCRYPT_KEY_ENV} (any secret text, the same on every server) to keep "
            "access keys in a shared database"
        )
    return _key_file(home / KEY_FILE)


def _key_file(path: Path) -> bytes:
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return bytes.fromhex(path.read_text().strip())
    with os.fdopen(fd, "w") as fh:
        fh.write(fresh.hex())
        fh.flush()
        os.fsync(fh.fileno())
    return fresh


class KeyStore(Protocol):
    """Where access keys are kept (:class:`graveler.storage.refs.sql_server.SqlAccessKeyStore`,
    :class:`graveler.storage.refs.sqlite_keys.SqliteAccessKeyStore`)."""

    def add(self, key: AccessKey) -> None: ...

    def get(self, access_key_id: str) -> AccessKey: ...

    def list(self) -> list[AccessKey]: ...

    def delete(self, access_key_id: str) -> None: ...


class Credentials:
    """Access keys over a store and the server's key."""

    def __init__(self, store: KeyStore, encryption_key: bytes) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self.store = store
        self._aead = AESGCM(encryption_key)

    def create(
        self,
        *,
        repositories: tuple[str, ...] | None = None,
        read_only: bool = False,
        admin: bool = False,
        description: str = "",
    ) -> NewKey:
        """A new key: every repository unless ``repositories`` names some; ``read_only``
        refuses writes; ``admin`` may also create repositories. An admin key is never read
        only or limited to repositories."""
        key_id = _ID_PREFIX + "".join(secrets.choice(_ID_ALPHABET) for _ in range(16))
        secret = base64.b64encode(secrets.token_bytes(30)).decode()
        return self._add(key_id, secret, repositories, read_only, admin, description)

    def import_key(
        self,
        access_key_id: str,
        secret_access_key: str,
        *,
        repositories: tuple[str, ...] | None = None,
        read_only: bool = False,
        admin: bool = False,
        description: str = "",
    ) -> NewKey:
        """Store an existing key pair (one made by lakeFS or by another graveler), with the
        same scopes as :meth:`create`. Raises InvalidArgument when either half does not look
        like a key (the message never holds the secret) and AlreadyExists when the ID is
        taken."""
        if not _IMPORTED_ID.fullmatch(access_key_id):
            raise InvalidArgument(
                f"access key ID {access_key_id!r} is not 16 to 128 upper-case letters and digits"
            )
        if not _IMPORTED_SECRET.fullmatch(secret_access_key):
            raise InvalidArgument(
                "a secret access key is 16 to 128 printable ASCII characters without spaces "
                f"(the one given has {len(secret_access_key)} characters)"
            )
        try:
            return self._add(
                access_key_id, secret_access_key, repositories, read_only, admin, description
            )
        except AlreadyExists:
            raise AlreadyExists(
                f"access key {access_key_id!r} already exists; "
                f"'graveler credentials delete {access_key_id}' removes it"
            ) from None

    def _add(
        self,
        key_id: str,
        secret: str,
        repositories: tuple[str, ...] | None,
        read_only: bool,
        admin: bool,
        description: str,
    ) -> NewKey:
        if admin and (read_only or repositories is not None):
            raise InvalidArgument("an admin key reaches every repository and may write")
        if repositories is not None:
            repositories = tuple(sorted({validate.repository_name(r) for r in repositories}))
        record = AccessKey(
            key_id,
            self._encrypt(key_id, secret),
            repositories,
            read_only,
            admin,
            validate.text(description, "description"),
            datetime.now(UTC),
        )
        self.store.add(record)
        return NewKey(key_id, secret, record)

    def secret_of(self, key: AccessKey) -> str:
        """The decrypted secret of a stored key (for checking signatures, in memory only)."""
        nonce, sealed = key.secret[:12], key.secret[12:]
        return self._aead.decrypt(nonce, sealed, key.access_key_id.encode()).decode()

    def _encrypt(self, key_id: str, secret: str) -> bytes:
        nonce = secrets.token_bytes(12)
        return nonce + self._aead.encrypt(nonce, secret.encode(), key_id.encode())
