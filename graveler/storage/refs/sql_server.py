"""The server's state in the refs database: access keys and multipart uploads.

Both stores open their own :class:`~graveler.storage.refs.db.Database` on the refs URL on first use
(migrating it, as :class:`~graveler.storage.refs.sql.SqlMetadataStore` does), so that a client that
never serves pays nothing for them.
"""

from __future__ import annotations

import builtins
import json
import threading
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Row, and_, delete, insert, or_, select

from graveler.core.errors import NotFound
from graveler.core.model import AccessKey, MultipartUpload, UploadedPart
from graveler.storage.refs.db import Database
from graveler.storage.refs.migrate import upgrade
from graveler.storage.refs.rows import dump_json
from graveler.storage.refs.schema import credentials, multipart_parts, multipart_uploads


class _LazyDatabase:
    def __init__(self, url: str) -> None:
        self._url = url
        self._db: Database | None = None
        self._lock = threading.Lock()

    @property
    def db(self) -> Database:
        with self._lock:
            if self._db is None:
                db = Database(self._url)
                try:
                    upgrade(db)
                except BaseException:
                    db.close()
                    raise
                self._db = db
            return self._db

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class SqlAccessKeyStore(_LazyDatabase):
    """Access keys (``graveler_credentials``)."""

    def add(self, key: AccessKey) -> None:
        """Raises AlreadyExists when the ID is taken."""
        with self.db.write("create access key", duplicate="access key exists") as conn:
            conn.execute(insert(credentials).values(_key_row(key)))

    def get(self, access_key_id: str) -> AccessKey:
        """Raises NotFound."""
        query = select(credentials).where(credentials.c.access_key_id == access_key_id)
        with self.db.read("look up access key") as conn:
            row = conn.execute(query).first()
        if row is None:
            raise NotFound(f"access key {access_key_id!r} not found")
        return _key(row)

    def list(self) -> builtins.list[AccessKey]:
        query = select(credentials).order_by(credentials.c.access_key_id)
        with self.db.read("list access keys") as conn:
            return [_key(row) for row in conn.execute(query)]

    def delete(self, access_key_id: str) -> None:
        """Raises NotFound."""
        query = delete(credentials).where(credentials.c.access_key_id == access_key_id)
        with self.db.write("delete access key") as conn:
            if conn.execute(query).rowcount == 0:
                raise NotFound(f"access key {access_key_id!r} not found")


class SqlUploadStore(_LazyDatabase):
    """Multipart uploads and their parts (``graveler_multipart_*``)."""

    def create(self, upload: MultipartUpload) -> None:
        row = {
            "upload_id": upload.upload_id,
            "repo": upload.repo,
            "branch": upload.branch,
            "path": upload.path,
            "content_type": upload.content_type,
            "metadata": dump_json(dict(upload.metadata)),
            "initiator": upload.initiator,
            "created": upload.created,
        }
        with self.db.write("create multipart upload", duplicate="upload exists") as conn:
            conn.execute(insert(multipart_uploads).values(row))

    def get(self, upload_id: str) -> MultipartUpload:
        """Raises NotFound."""
        query = select(multipart_uploads).where(multipart_uploads.c.upload_id == upload_id)
        with self.db.read("look up multipart upload") as conn:
            row = conn.execute(query).first()
        if row is None:
            raise NotFound(f"multipart upload {upload_id!r} not found")
        return _upload(row)

    def list(
        self, repo: str, *, after: tuple[str, str] = ("", ""), limit: int = 1000
    ) -> builtins.list[MultipartUpload]:
        """Uploads of ``repo`` ordered by (path, upload ID), strictly after ``after``."""
        t = multipart_uploads.c
        path, upload_id = after
        query = (
            select(multipart_uploads)
            .where(t.repo == repo)
            .where(or_(t.path > path, and_(t.path == path, t.upload_id > upload_id)))
            .order_by(t.path, t.upload_id)
            .limit(limit)
        )
        with self.db.read("list multipart uploads") as conn:
            return [_upload(row) for row in conn.execute(query)]

    def older_than(self, repo: str, before: datetime) -> builtins.list[MultipartUpload]:
        t = multipart_uploads.c
        query = select(multipart_uploads).where(t.repo == repo, t.created < before)
        with self.db.read("list old multipart uploads") as conn:
            return [_upload(row) for row in conn.execute(query)]

    def put_part(self, part: UploadedPart) -> UploadedPart | None:
        """Record ``part`` (replacing an earlier upload of its number, which is returned so
        its bytes can go). NotFound when the upload is gone (completed or aborted)."""
        t = multipart_parts.c
        where = and_(t.upload_id == part.upload_id, t.part_number == part.part_number)
        with self.db.write("record uploaded part") as conn:
            exists = select(multipart_uploads.c.upload_id).where(
                multipart_uploads.c.upload_id == part.upload_id
            )
            if conn.execute(exists).first() is None:
                raise NotFound(f"multipart upload {part.upload_id!r} not found")
            old = conn.execute(select(multipart_parts).where(where)).first()
            if old is not None:
                conn.execute(delete(multipart_parts).where(where))
            conn.execute(insert(multipart_parts).values(_part_row(part)))
        return _part(old) if old is not None else None

    def parts(
        self, upload_id: str, *, after: int = 0, limit: int = 10_000
    ) -> builtins.list[UploadedPart]:
        t = multipart_parts.c
        query = (
            select(multipart_parts)
            .where(t.upload_id == upload_id, t.part_number > after)
            .order_by(t.part_number)
            .limit(limit)
        )
        with self.db.read("list uploaded parts") as conn:
            return [_part(row) for row in conn.execute(query)]

    def finish(self, upload_id: str) -> Sequence[UploadedPart]:
        """Remove the upload and its parts (completed or aborted); returns the parts. NotFound
        when it is already gone: of two racing finishers exactly one gets the parts."""
        t = multipart_parts.c
        with self.db.write("finish multipart upload") as conn:
            gone = conn.execute(
                delete(multipart_uploads).where(multipart_uploads.c.upload_id == upload_id)
            )
            if gone.rowcount == 0:
                raise NotFound(f"multipart upload {upload_id!r} not found")
            rows = conn.execute(select(multipart_parts).where(t.upload_id == upload_id)).all()
            conn.execute(delete(multipart_parts).where(t.upload_id == upload_id))
        return [_part(row) for row in rows]


def _key_row(key: AccessKey) -> dict[str, object]:
    repos = None if key.repositories is None else dump_json(list(key.repositories))
    return {
        "access_key_id": key.access_key_id,
        "secret": key.secret,
        "repositories": repos,
        "read_only": key.read_only,
        "admin": key.admin,
        "description": key.description,
        "created": key.created,
    }


def _key(row: Row[tuple[object, ...]]) -> AccessKey:
    m = row._mapping
    repos = None if m["repositories"] is None else tuple(json.loads(m["repositories"]))
    return AccessKey(
        m["access_key_id"],
        bytes(m["secret"]),
        repos,
        bool(m["read_only"]),
        bool(m["admin"]),
        m["description"],
        m["created"],
    )


def _upload(row: Row[tuple[object, ...]]) -> MultipartUpload:
    m = row._mapping
    return MultipartUpload(
        m["upload_id"],
        m["repo"],
        m["branch"],
        m["path"],
        m["content_type"],
        json.loads(m["metadata"]),
        m["initiator"],
        m["created"],
    )


def _part_row(part: UploadedPart) -> dict[str, object]:
    return {
        "upload_id": part.upload_id,
        "part_number": part.part_number,
        "physical_address": part.physical_address,
        "size": part.size,
        "md5": part.md5,
        "created": part.created,
    }


def _part(row: Row[tuple[object, ...]]) -> UploadedPart:
    m = row._mapping
    return UploadedPart(
        m["upload_id"], m["part_number"], m["physical_address"], m["size"], m["md5"], m["created"]
    )
