"""Fixtures of the Iceberg suites.

In-process suites run on SQLite (the races that depend on the database also run on
PostgreSQL, in test_catalog.py). The client suites (REST, Spark, DuckDB, the merge matrix)
share one ``graveler serve`` with two workers over repository ``lake`` for the session, and
one Spark driver with two catalogs on it: ``gv`` (tables reloaded on every statement) and
``gvc`` (tables cached once loaded: its writes commit from a stale base, as a concurrent
writer's do).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graveler.client import Graveler
from graveler.repository import Repository
from tests.iceberg.spark import SparkDriver, rest_catalog
from tests.serving import Key, Served


@pytest.fixture
def database_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'refs.db'}"


@pytest.fixture(scope="session")
def iceberg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("iceberg-serve")
    with Served(home, None, "--workers", "2") as served:
        for name in ("lake", "other"):
            served.cli("repo", "create", f"graveler://{name}", (home / f"{name}-ns").as_uri())
        yield served


@pytest.fixture(scope="session")
def iceberg_key(iceberg_server: Served) -> Key:
    return iceberg_server.credentials()


@pytest.fixture(scope="session")
def served_repo(iceberg_server: Served) -> Iterator[Repository]:
    """Repository ``lake`` of the served home, opened in the test process."""
    client = Graveler(home=iceberg_server.home)
    try:
        yield client.repository("lake")
    finally:
        client.close()


@pytest.fixture(scope="session")
def spark(iceberg_server: Served, iceberg_key: Key) -> Iterator[SparkDriver]:
    uri = iceberg_server.urls["iceberg"]
    settings = {
        **rest_catalog("gv", uri, iceberg_key),
        **rest_catalog("gvc", uri, iceberg_key, cached=True),
    }
    driver = SparkDriver(settings)
    try:
        yield driver
    finally:
        driver.close()
