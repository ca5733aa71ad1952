"""Initial refs and staging schema: repositories, branches, tags, commits, staged entries.

Revision ID: 0001
Revises:
Create Date: 2026-11-22

Column types are spelled out here (not imported from ``graveler.storage.refs.schema``) so this
revision keeps creating the same tables when the runtime schema later moves on.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _name() -> sa.types.TypeEngine[str]:
    """VARCHAR(256) compared by code point: COLLATE "C" on PostgreSQL, BINARY on SQLite."""
    return sa.String(256).with_variant(sa.String(256, collation="C"), "postgresql")


def _repo_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["repo"], ["graveler_repositories.name"], name=f"fk_{table}_repo", ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "graveler_repositories",
        sa.Column("name", _name(), nullable=False),
        sa.Column("storage_namespace", sa.Text(), nullable=False),
        sa.Column("default_branch", _name(), nullable=False),
        sa.Column("creation_date", sa.DateTime(timezone=True), nullable=False),
        sa.Column("range_min_size", sa.BigInteger(), nullable=False),
        sa.Column("range_max_size", sa.BigInteger(), nullable=False),
        sa.Column("range_raggedness", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_graveler_repositories"),
    )
    op.create_table(
        "graveler_branches",
        sa.Column("repo", _name(), nullable=False),
        sa.Column("name", _name(), nullable=False),
        sa.Column("commit_id", _name(), nullable=False),
        sa.Column("staging_token", _name(), nullable=False),
        sa.Column("sealed_tokens", sa.Text(), nullable=False),
        sa.Column("protected", sa.Boolean(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("repo", "name", name="pk_graveler_branches"),
        _repo_fk("graveler_branches"),
    )
    op.create_table(
        "graveler_tags",
        sa.Column("repo", _name(), nullable=False),
        sa.Column("name", _name(), nullable=False),
        sa.Column("commit_id", _name(), nullable=False),
        sa.PrimaryKeyConstraint("repo", "name", name="pk_graveler_tags"),
        _repo_fk("graveler_tags"),
    )
    op.create_table(
        "graveler_commits",
        sa.Column("repo", _name(), nullable=False),
        sa.Column("id", _name(), nullable=False),
        sa.Column("parents", sa.Text(), nullable=False),
        sa.Column("metarange_id", _name(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("committer", sa.Text(), nullable=False),
        sa.Column("creation_date", sa.DateTime(timezone=True), nullable=False),
        sa.Column("metadata", sa.Text(), nullable=False),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("repo", "id", name="pk_graveler_commits"),
        _repo_fk("graveler_commits"),
    )
    op.create_table(
        "graveler_staged_entries",
        sa.Column("token", _name(), nullable=False),
        sa.Column("key", sa.LargeBinary(), nullable=False),
        sa.Column("identity", sa.LargeBinary(), nullable=True),
        sa.Column("value", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("token", "key", name="pk_graveler_staged_entries"),
    )


def downgrade() -> None:
    for table in (
        "graveler_staged_entries",
        "graveler_commits",
        "graveler_tags",
        "graveler_branches",
        "graveler_repositories",
    ):
        op.drop_table(table)
