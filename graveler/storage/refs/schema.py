"""SQL schema of refs and staging (SQLAlchemy Core), shared by SQLite and PostgreSQL.

Every table is prefixed ``graveler_`` so the schema can live inside another application's
database (Airflow's metadata DB, for one). The schema is *created* by the Alembic migrations in
``graveler/storage/refs/migrations/``; this module is the runtime view of it, and a test checks that
the two agree.

Ordering rules that hold on both backends:

* Names and IDs (``Name`` columns) compare by code point: PostgreSQL columns carry
  ``COLLATE "C"`` (so a database created with a linguistic collation still sorts and
  prefix-searches them bytewise), SQLite's default ``BINARY`` collation already does.
* Staged keys are ``LargeBinary`` (BLOB / BYTEA), compared with ``memcmp``.

Timestamps are stored as ``TIMESTAMP WITH TIME ZONE`` on PostgreSQL and as naive UTC text on
SQLite; :class:`UtcDateTime` converts both to timezone-aware UTC with microseconds intact.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Dialect,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    TypeDecorator,
)

#: Prefix of every table (and of the Alembic version table).
TABLE_PREFIX = "graveler_"
#: Alembic's version table for this schema; named so it cannot clash with a host application's.
VERSION_TABLE = "graveler_alembic_version"

NAME_LENGTH = 256


def name_type(length: int = NAME_LENGTH) -> String:
    """A VARCHAR compared by code point on both backends (``COLLATE "C"`` on PostgreSQL)."""
    return String(length).with_variant(String(length, collation="C"), "postgresql")


class UtcDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes, microsecond precision, exact round trip on both backends.

    Binding a naive datetime raises ``ValueError``: the model requires aware values.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: graveler stores aware UTC times only")
        utc = value.astimezone(UTC)
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


metadata = MetaData()

repositories = Table(
    "graveler_repositories",
    metadata,
    Column("name", name_type(), nullable=False),
    Column("storage_namespace", Text, nullable=False),
    Column("default_branch", name_type(), nullable=False),
    Column("creation_date", UtcDateTime(), nullable=False),
    Column("range_min_size", BigInteger, nullable=False),
    Column("range_max_size", BigInteger, nullable=False),
    Column("range_raggedness", BigInteger, nullable=False),
    PrimaryKeyConstraint("name", name="pk_graveler_repositories"),
)

branches = Table(
    "graveler_branches",
    metadata,
    Column("repo", name_type(), nullable=False),
    Column("name", name_type(), nullable=False),
    Column("commit_id", name_type(), nullable=False),
    Column("staging_token", name_type(), nullable=False),
    # JSON array of tokens, newest first; compared as text by update_branch's CAS.
    Column("sealed_tokens", Text, nullable=False),
    Column("protected", Boolean, nullable=False),
    # Bumped by every update; handy for debugging and for cheap change detection.
    Column("version", BigInteger, nullable=False),
    PrimaryKeyConstraint("repo", "name", name="pk_graveler_branches"),
    ForeignKeyConstraint(
        ["repo"],
        ["graveler_repositories.name"],
        name="fk_graveler_branches_repo",
        ondelete="CASCADE",
    ),
)

tags = Table(
    "graveler_tags",
    metadata,
    Column("repo", name_type(), nullable=False),
    Column("name", name_type(), nullable=False),
    Column("commit_id", name_type(), nullable=False),
    PrimaryKeyConstraint("repo", "name", name="pk_graveler_tags"),
    ForeignKeyConstraint(
        ["repo"],
        ["graveler_repositories.name"],
        name="fk_graveler_tags_repo",
        ondelete="CASCADE",
    ),
)

# The primary key (repo, id) is the index used by commit-ID prefix search: the query is a range
# ``id >= prefix AND id < successor(prefix)``, which both backends answer from the b-tree.
commits = Table(
    "graveler_commits",
    metadata,
    Column("repo", name_type(), nullable=False),
    Column("id", name_type(), nullable=False),
    Column("parents", Text, nullable=False),  # JSON array of commit IDs
    Column("metarange_id", name_type(), nullable=False),
    Column("message", Text, nullable=False),
    Column("committer", Text, nullable=False),
    Column("creation_date", UtcDateTime(), nullable=False),
    Column("metadata", Text, nullable=False),  # JSON object, keys sorted
    Column("generation", BigInteger, nullable=False),
    PrimaryKeyConstraint("repo", "id", name="pk_graveler_commits"),
    ForeignKeyConstraint(
        ["repo"],
        ["graveler_repositories.name"],
        name="fk_graveler_commits_repo",
        ondelete="CASCADE",
    ),
)

# One row per (token, key). identity NULL = tombstone (value is NULL too). Not tied to a branch
# by a foreign key: sealed tokens outlive their place in the branch row until dropped.
staged_entries = Table(
    "graveler_staged_entries",
    metadata,
    Column("token", name_type(), nullable=False),
    Column("key", LargeBinary, nullable=False),
    Column("identity", LargeBinary, nullable=True),
    Column("value", LargeBinary, nullable=True),
    PrimaryKeyConstraint("token", "key", name="pk_graveler_staged_entries"),
)

# One row per hook run (graveler.versioning.hooks): which event, branch and commit, how it ended,
# and the result of each hook as a JSON array. Listed newest first: run IDs sort by start time.
hook_runs = Table(
    "graveler_hook_runs",
    metadata,
    Column("repo", name_type(), nullable=False),
    Column("run_id", name_type(), nullable=False),
    Column("event", name_type(64), nullable=False),
    Column("status", name_type(16), nullable=False),
    Column("branch", name_type(), nullable=True),
    Column("tag", name_type(), nullable=True),
    Column("commit_id", name_type(), nullable=False),
    Column("source_ref", Text, nullable=True),
    Column("started", UtcDateTime(), nullable=False),
    Column("ended", UtcDateTime(), nullable=False),
    Column("hooks", Text, nullable=False),
    PrimaryKeyConstraint("repo", "run_id", name="pk_graveler_hook_runs"),
    ForeignKeyConstraint(
        ["repo"],
        ["graveler_repositories.name"],
        name="fk_graveler_hook_runs_repo",
        ondelete="CASCADE",
    ),
)

# Access keys of `graveler serve` (S3 gateway, Iceberg catalog, UI sign-in). ``secret`` is the
# secret access key encrypted under the server's key (graveler.server.credentials), never
# stored in the clear. ``repositories`` is a JSON array, NULL for every repository.
credentials = Table(
    "graveler_credentials",
    metadata,
    Column("access_key_id", name_type(128), nullable=False),
    Column("secret", LargeBinary, nullable=False),
    Column("repositories", Text, nullable=True),
    Column("read_only", Boolean, nullable=False),
    Column("admin", Boolean, nullable=False),
    Column("description", Text, nullable=False),
    Column("created", UtcDateTime(), nullable=False),
    PrimaryKeyConstraint("access_key_id", name="pk_graveler_credentials"),
)

# S3 multipart uploads in progress: the target (repository, branch, path) and what the
# object will carry; nothing is staged before CompleteMultipartUpload.
multipart_uploads = Table(
    "graveler_multipart_uploads",
    metadata,
    Column("upload_id", name_type(128), nullable=False),
    Column("repo", name_type(), nullable=False),
    Column("branch", name_type(), nullable=False),
    Column("path", Text, nullable=False),
    Column("content_type", Text, nullable=False),
    Column("metadata", Text, nullable=False),  # JSON object
    Column("initiator", name_type(128), nullable=False),
    Column("created", UtcDateTime(), nullable=False),
    PrimaryKeyConstraint("upload_id", name="pk_graveler_multipart_uploads"),
    ForeignKeyConstraint(
        ["repo"],
        ["graveler_repositories.name"],
        name="fk_graveler_multipart_uploads_repo",
        ondelete="CASCADE",
    ),
    Index("ix_graveler_multipart_uploads_repo", "repo", "created"),
)

# One row per uploaded part (the latest upload of a part number wins): where its bytes are.
multipart_parts = Table(
    "graveler_multipart_parts",
    metadata,
    Column("upload_id", name_type(128), nullable=False),
    Column("part_number", Integer, nullable=False),
    Column("physical_address", Text, nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("md5", name_type(64), nullable=False),
    Column("created", UtcDateTime(), nullable=False),
    PrimaryKeyConstraint("upload_id", "part_number", name="pk_graveler_multipart_parts"),
)
