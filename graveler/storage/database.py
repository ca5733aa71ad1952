"""graveler's tables inside a database that another system manages (public API).

An orchestrator that keeps its metadata in SQL (Airflow's ``db migrate``, for one) can create
and upgrade graveler's tables with its own migration machinery. Everything it needs is here:
the SQLAlchemy :data:`metadata` of the ``graveler_`` tables, the name of their Alembic version
table, where the migration scripts live, an Alembic configuration bound to a connection, and
the idempotent upgrade itself. A :class:`graveler.Graveler` client opening the same database
runs the same scripts, so either side may go first.
"""

from __future__ import annotations

from graveler.storage.refs.migrate import SCRIPT_LOCATION, alembic_config, upgrade_connection
from graveler.storage.refs.schema import VERSION_TABLE, metadata

__all__ = ["SCRIPT_LOCATION", "VERSION_TABLE", "alembic_config", "metadata", "upgrade_connection"]
