"""Branch protection rules and garbage-collection rules per repository, hidden branches, and
imports run in the background.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _name(length: int = 256) -> sa.types.TypeEngine[str]:
    """VARCHAR compared by code point: COLLATE "C" on PostgreSQL, BINARY on SQLite."""
    return sa.String(length).with_variant(sa.String(length, collation="C"), "postgresql")


def _repo_key(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["repo"], ["graveler_repositories.name"], name=f"fk_{table}_repo", ondelete="CASCADE"
    )


def upgrade() -> None:
    with op.batch_alter_table("graveler_branches") as batch:
        batch.add_column(
            sa.Column("hidden", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "graveler_branch_protection",
        sa.Column("repo", _name(), nullable=False),
        sa.Column("pattern", _name(), nullable=False),
        sa.Column("blocked", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("repo", "pattern", name="pk_graveler_branch_protection"),
        _repo_key("graveler_branch_protection"),
    )
    op.create_table(
        "graveler_gc_rules",
        sa.Column("repo", _name(), nullable=False),
        sa.Column("rules", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("repo", name="pk_graveler_gc_rules"),
        _repo_key("graveler_gc_rules"),
    )
    op.create_table(
        "graveler_imports",
        sa.Column("id", _name(64), nullable=False),
        sa.Column("repo", _name(), nullable=False),
        sa.Column("branch", _name(), nullable=False),
        sa.Column("sources", sa.Text(), nullable=False),
        sa.Column("state", _name(16), nullable=False),
        sa.Column("ingested", sa.BigInteger(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("metarange_id", _name(), nullable=True),
        sa.Column("commit_id", _name(), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_graveler_imports"),
        _repo_key("graveler_imports"),
    )
    op.create_index("ix_graveler_imports_repo", "graveler_imports", ["repo", "created"])


def downgrade() -> None:
    op.drop_index("ix_graveler_imports_repo", "graveler_imports")
    op.drop_table("graveler_imports")
    op.drop_table("graveler_gc_rules")
    op.drop_table("graveler_branch_protection")
    with op.batch_alter_table("graveler_branches") as batch:
        batch.drop_column("hidden")
