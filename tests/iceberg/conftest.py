"""The Iceberg suites run on SQLite; the races that depend on the database also run on
PostgreSQL (test_catalog.py), where they are marked ``postgres``."""

from __future__ import annotations

import pytest


@pytest.fixture
def database_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'refs.db'}"
