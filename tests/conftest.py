"""Shared fixtures: a Graveler client on SQLite and on PostgreSQL, and a repository in it.

PostgreSQL runs when ``GRAVELER_TEST_POSTGRES_URL`` is set (``make test`` sets it after
starting the local server); each test gets its own freshly created schema.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.storage.refs.scratch import scratch_schema

PG_URL = os.environ.get("GRAVELER_TEST_POSTGRES_URL")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the Spark data source tests first (with the security suite's Spark test). PySpark
    keeps one JVM per test process, and the graveler data source must be resolved by the first
    SparkSession that JVM starts; the Dagster example starts a plain session of its own, which
    must come later."""
    items.sort(key=lambda item: 0 if _uses_spark_data_source(item) else 1)


def _uses_spark_data_source(item: pytest.Item) -> bool:
    return "/tests/spark/" in str(item.path) or item.path.name == "test_spark_secrets.py"


@pytest.fixture
def pg_schema_url() -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a fresh schema, dropped afterwards."""
    if not PG_URL:
        pytest.skip("GRAVELER_TEST_POSTGRES_URL is not set (make test sets it)")
    with scratch_schema(PG_URL, "t_") as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'refs.db'}"
    return str(request.getfixturevalue("pg_schema_url"))


@pytest.fixture
def gv(tmp_path, database_url: str) -> Iterator[Graveler]:
    client = Graveler(home=tmp_path / "home", database_url=database_url)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def repo(gv: Graveler, tmp_path) -> Repository:
    return gv.create_repository("lake", (tmp_path / "lake-ns").as_uri())
