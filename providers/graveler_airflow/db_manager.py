"""``airflow db migrate`` creates and upgrades graveler's tables in Airflow's metadata database.

Registered under ``db-managers`` in the provider info, so Airflow (3.2+) discovers it; on older
3.x list it in ``[database] external_db_managers``. Graveler's tables are all prefixed
``graveler_`` and versioned in their own table (``graveler_alembic_version``), so they live
beside Airflow's without clashing. Migrations run on Airflow's own migration session and are
the same scripts graveler runs when it opens a database by itself.

``airflow db reset`` leaves graveler's tables alone: they hold the refs of repositories whose
data lives in object storage, and dropping them would orphan that data.
"""

from __future__ import annotations

from typing import Any

from airflow.utils.db_manager import BaseDBManager

from graveler.database import (
    SCRIPT_LOCATION,
    VERSION_TABLE,
    alembic_config,
    metadata,
    upgrade_connection,
)
from graveler.errors import InvalidArgument


class GravelerDBManager(BaseDBManager):
    """Runs graveler's Alembic migrations inside Airflow's ``db migrate``."""

    metadata = metadata
    version_table_name = VERSION_TABLE
    migration_dir = SCRIPT_LOCATION
    alembic_file = ""  # no alembic.ini: the configuration is built in code
    supports_table_dropping = False

    def get_alembic_config(self) -> Any:
        """Graveler's Alembic configuration, bound to Airflow's migration connection."""
        return alembic_config(self.session.connection())

    def initdb(self, use_migration_files: bool = False) -> None:
        """Create graveler's tables (through the migrations, so they are versioned)."""
        self.upgradedb(use_migration_files=use_migration_files)

    def upgradedb(
        self,
        to_revision: str | None = None,
        from_revision: str | None = None,
        show_sql_only: bool = False,
        use_migration_files: bool = False,
    ) -> None:
        """Upgrade graveler's schema to ``to_revision`` (default: newest) and commit."""
        if show_sql_only or from_revision:
            raise InvalidArgument("graveler's tables support online upgrades only")
        self._release_metadata_locks_if_needed()
        self.log.info("Upgrading graveler's tables")
        upgrade_connection(self.session.connection(), to_revision or "head")
        self.session.commit()

    def downgrade(
        self, to_revision: str, from_revision: str | None = None, show_sql_only: bool = False
    ) -> None:
        raise InvalidArgument(
            "graveler's tables cannot be downgraded: restore a database backup instead"
        )
