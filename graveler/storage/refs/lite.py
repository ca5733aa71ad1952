"""Reading the repositories of a SQLite refs database with the standard library alone.

The command line's ``repo list`` uses this to answer without importing SQLAlchemy. It only
reads, and only a database whose schema is at this build's revision; otherwise (no such file,
an older or newer schema, any error) it answers None and the caller takes the full path,
which migrates and reports errors as usual. Rows are converted exactly as
:mod:`graveler.storage.refs.rows` converts them.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from graveler.core.model import RangeSettings, Repository
from graveler.storage.refs.revision import HEAD_REVISION
from graveler.storage.refs.sqlite_db import schema_revision

_REPOSITORIES = (
    "SELECT name, storage_namespace, default_branch, creation_date, range_min_size, "
    "range_max_size, range_raggedness FROM graveler_repositories ORDER BY name"
)


def list_repositories(path: str) -> list[Repository] | None:
    """The repositories in the SQLite database file at ``path``, sorted by name, or None
    when this reader cannot answer."""
    if schema_revision(path) != HEAD_REVISION:
        return None
    try:
        conn = sqlite3.connect(path, timeout=30.0)
    except sqlite3.Error:
        return None
    try:
        return [_repository(*row) for row in conn.execute(_REPOSITORIES)]
    except (sqlite3.Error, ValueError):
        return None
    finally:
        conn.close()


def _repository(
    name: str, namespace: str, branch: str, created: str, low: int, high: int, ragged: int
) -> Repository:
    when = datetime.fromisoformat(created)
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return Repository(name, namespace, branch, when, RangeSettings(low, high, ragged))
