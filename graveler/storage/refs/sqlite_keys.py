"""Access keys (``graveler_credentials``) on the embedded SQLite store, with the standard
library's ``sqlite3``: what :class:`graveler.storage.refs.sql_server.SqlAccessKeyStore` does, on the
same table and row format, without importing SQLAlchemy.

``graveler credentials create``, ``list`` and ``delete`` on the default SQLite database ran
in 1.3-2.5 s here, of which about 1.4 s was importing SQLAlchemy for this one table; on the
embedded store they take what the other commands take (about 0.2 s).
"""

from __future__ import annotations

import builtins
import json
from typing import Any

from graveler.core.errors import NotFound
from graveler.core.model import AccessKey
from graveler.storage.refs.sqlite_conn import format_time, parse_time
from graveler.storage.refs.sqlite_db import SqliteDatabase

_COLUMNS = "access_key_id, secret, repositories, read_only, admin, description, created"


class SqliteAccessKeyStore:
    """Access keys in the SQLite file at ``path`` (its schema already migrated: the client
    opens its metadata store, which migrates, first)."""

    def __init__(self, path: str, *, busy_timeout: float = 30.0) -> None:
        self._db = SqliteDatabase(path, busy_timeout=busy_timeout)

    def add(self, key: AccessKey) -> None:
        """Raises AlreadyExists when the ID is taken."""
        repos = None if key.repositories is None else json.dumps(list(key.repositories))
        row = (
            key.access_key_id,
            key.secret,
            repos,
            key.read_only,
            key.admin,
            key.description,
            format_time(key.created),
        )
        with self._db.write("create access key", duplicate="access key exists") as conn:
            conn.execute(
                f"INSERT INTO graveler_credentials ({_COLUMNS}) VALUES (?,?,?,?,?,?,?)", row
            )

    def get(self, access_key_id: str) -> AccessKey:
        """Raises NotFound."""
        query = f"SELECT {_COLUMNS} FROM graveler_credentials WHERE access_key_id = ?"
        with self._db.statement("look up access key") as conn:
            row = conn.execute(query, (access_key_id,)).fetchone()
        if row is None:
            raise NotFound(f"access key {access_key_id!r} not found")
        return _key(row)

    def list(self) -> builtins.list[AccessKey]:
        query = f"SELECT {_COLUMNS} FROM graveler_credentials ORDER BY access_key_id"
        with self._db.statement("list access keys") as conn:
            return [_key(row) for row in conn.execute(query).fetchall()]

    def delete(self, access_key_id: str) -> None:
        """Raises NotFound."""
        query = "DELETE FROM graveler_credentials WHERE access_key_id = ?"
        with self._db.write("delete access key") as conn:
            if conn.execute(query, (access_key_id,)).rowcount == 0:
                raise NotFound(f"access key {access_key_id!r} not found")

    def close(self) -> None:
        self._db.close()


def _key(row: tuple[Any, ...]) -> AccessKey:
    key_id, secret, repos, read_only, admin, description, created = row
    return AccessKey(
        key_id,
        bytes(secret),
        None if repos is None else tuple(json.loads(repos)),
        bool(read_only),
        bool(admin),
        description,
        parse_time(created),
    )
