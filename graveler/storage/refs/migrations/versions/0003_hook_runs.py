"""Hook runs: one row per run of an event's hooks (``graveler actions runs``).

Revision ID: 0003
Revises: 0001
Create Date: 2026-11-24

Written on the parity branch, where 0002 (another branch) did not exist yet: when both land,
``down_revision`` becomes "0002" (the lead re-chains them at merge time).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _name(length: int = 256) -> sa.types.TypeEngine[str]:
    """VARCHAR compared by code point: COLLATE "C" on PostgreSQL, BINARY on SQLite."""
    return sa.String(length).with_variant(sa.String(length, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "graveler_hook_runs",
        sa.Column("repo", _name(), nullable=False),
        sa.Column("run_id", _name(), nullable=False),
        sa.Column("event", _name(64), nullable=False),
        sa.Column("status", _name(16), nullable=False),
        sa.Column("branch", _name(), nullable=True),
        sa.Column("tag", _name(), nullable=True),
        sa.Column("commit_id", _name(), nullable=False),
        sa.Column("source_ref", sa.Text(), nullable=True),
        sa.Column("started", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended", sa.DateTime(timezone=True), nullable=False),
        sa.Column("hooks", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("repo", "run_id", name="pk_graveler_hook_runs"),
        sa.ForeignKeyConstraint(
            ["repo"],
            ["graveler_repositories.name"],
            name="fk_graveler_hook_runs_repo",
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("graveler_hook_runs")
