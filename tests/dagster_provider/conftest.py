"""Fixtures for the Dagster integration: a real persistent Dagster instance in a temporary
DAGSTER_HOME, a GravelerResource on SQLite or PostgreSQL, and helpers that evaluate the real
sensors against the instance's run records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from graveler_dagster import GravelerResource, graveler_definitions
from graveler_dagster.definitions import DefinitionsPieces

from graveler.client import Graveler
from graveler.repository import Repository


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    home = tmp_path / "dagster_home"
    home.mkdir()
    with dg.DagsterInstance.local_temp(str(home)) as inst:
        yield inst


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'graveler.db'}"


def make_resource(tmp_path: Path, database_url: str) -> GravelerResource:
    return GravelerResource(
        repository="lake",
        database_url=database_url,
        home=str(tmp_path / "gvhome"),
        storage_namespace=(tmp_path / "lake-ns").as_uri(),
    )


@pytest.fixture
def resource(tmp_path: Path, sqlite_url: str) -> GravelerResource:
    return make_resource(tmp_path, sqlite_url)


@pytest.fixture
def pieces(resource: GravelerResource) -> DefinitionsPieces:
    return graveler_definitions(resource)


@pytest.fixture
def observer(resource: GravelerResource) -> Iterator[Any]:
    """A function returning the repository seen from a separate client (created if needed)."""
    clients: list[Graveler] = []

    def get() -> Repository:
        gv = Graveler(home=resource.home, database_url=resource.database_url)
        clients.append(gv)
        try:
            return gv.repository(resource.repository)
        except Exception:
            return gv.create_repository(resource.repository, resource.storage_namespace)

    yield get
    for gv in clients:
        gv.close()


def run_status_event(result: dg.ExecuteInProcessResult) -> dg.DagsterEvent:
    return result.get_run_success_event() if result.success else result.get_run_failure_event()


def evaluate_run_sensor(
    sensor: dg.SensorDefinition,
    instance: dg.DagsterInstance,
    result: dg.ExecuteInProcessResult,
    resources: dict[str, Any],
) -> Any:
    """Evaluate a run-status (or run-failure) sensor on a finished run, as the daemon would:
    with the real instance, its stored run record and the run's final event."""
    run = instance.get_run_by_id(result.run_id)
    assert run is not None
    with dg.build_run_status_sensor_context(
        sensor_name=sensor.name,
        dagster_instance=instance,
        dagster_run=run,
        dagster_event=run_status_event(result),
        resources=resources,
    ) as ctx:
        return sensor(ctx)


@pytest.fixture(scope="package")
def spark() -> Iterator[Any]:
    """One local Spark session for the whole test session (2 cores, no UI). Its Python
    workers run this interpreter with this checkout on their path (they do not see the
    editable install's import hook)."""
    from graveler_spark import spark_session

    root = Path(__file__).resolve().parents[2]
    session = spark_session(
        "local[2]",
        app_name="graveler-dagster-tests",
        pythonpath=[str(root), str(root / "providers")],
        config={
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.enabled": "false",
            "spark.driver.memory": "1g",
        },
    )
    yield session
    session.stop()
