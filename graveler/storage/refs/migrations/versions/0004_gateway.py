"""The server's tables: access keys (secrets encrypted) and multipart uploads with their parts.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _name(length: int = 256) -> sa.types.TypeEngine[str]:
    """VARCHAR compared by code point: COLLATE "C" on PostgreSQL, BINARY on SQLite."""
    return sa.String(length).with_variant(sa.String(length, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "graveler_credentials",
        sa.Column("access_key_id", _name(128), nullable=False),
        sa.Column("secret", sa.LargeBinary(), nullable=False),
        sa.Column("repositories", sa.Text(), nullable=True),
        sa.Column("read_only", sa.Boolean(), nullable=False),
        sa.Column("admin", sa.Boolean(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("access_key_id", name="pk_graveler_credentials"),
    )
    op.create_table(
        "graveler_multipart_uploads",
        sa.Column("upload_id", _name(128), nullable=False),
        sa.Column("repo", _name(), nullable=False),
        sa.Column("branch", _name(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("content_type", sa.Text(), nullable=False),
        sa.Column("metadata", sa.Text(), nullable=False),
        sa.Column("initiator", _name(128), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("upload_id", name="pk_graveler_multipart_uploads"),
        sa.ForeignKeyConstraint(
            ["repo"],
            ["graveler_repositories.name"],
            name="fk_graveler_multipart_uploads_repo",
            ondelete="CASCADE",
        ),
    )
    op.create_index(
        "ix_graveler_multipart_uploads_repo", "graveler_multipart_uploads", ["repo", "created"]
    )
    op.create_table(
        "graveler_multipart_parts",
        sa.Column("upload_id", _name(128), nullable=False),
        sa.Column("part_number", sa.Integer(), nullable=False),
        sa.Column("physical_address", sa.Text(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("md5", _name(64), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("upload_id", "part_number", name="pk_graveler_multipart_parts"),
    )


def downgrade() -> None:
    op.drop_table("graveler_multipart_parts")
    op.drop_index("ix_graveler_multipart_uploads_repo", "graveler_multipart_uploads")
    op.drop_table("graveler_multipart_uploads")
    op.drop_table("graveler_credentials")
