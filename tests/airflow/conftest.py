"""Fixtures for the Airflow provider tests: one real Airflow deployment (PostgreSQL,
LocalExecutor, api-server, scheduler, dag-processor and triggerer; see
:mod:`tests.airflow.deployment`) for the whole tests/airflow package, started on first use and
stopped after its last test.

AIRFLOW_HOME is set for this process before anything imports Airflow, so the tests that import
``airflow.sdk`` in the pytest process never touch ``~/airflow``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from graveler.client import Graveler
from tests.airflow.deployment import Deployment

if TYPE_CHECKING:
    from tests.airflow.e2e_scenario import Scenario

_BASE = Path(tempfile.mkdtemp(prefix="graveler-airflow-"))
atexit.register(shutil.rmtree, _BASE, True)
os.environ["AIRFLOW_HOME"] = str(_BASE / "unit-airflow-home")
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
PG_URL = os.environ.get("GRAVELER_TEST_POSTGRES_URL")


@pytest.fixture(scope="package")
def deployment() -> Iterator[Deployment]:
    """The session's Airflow deployment, running, with the test and example DAGs parsed."""
    if not PG_URL:
        pytest.skip("GRAVELER_TEST_POSTGRES_URL is not set (make test sets it)")
    airflow = Deployment(_BASE / "deployment", PG_URL)
    try:
        airflow.start()
        airflow.wait_for_dags(
            "e2e_runs",
            "e2e_discard",
            "e2e_sensor",
            "e2e_prune",
            "e2e_downstream",
            "e2e_operators",
            "e2e_watcher",
            "graveler_example_etl",
        )
        yield airflow
    finally:
        airflow.stop()


@pytest.fixture(scope="package")
def lake(deployment: Deployment) -> Iterator[Graveler]:
    """A graveler client of this process on the deployment's refs database."""
    client = Graveler(home=deployment.graveler_home, database_url=deployment.database_url)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="package")
def scenario(
    deployment: Deployment, lake: Graveler, tmp_path_factory: pytest.TempPathFactory
) -> Scenario:
    """The end-to-end scenario, run once on the deployment for both modules that check it
    (``test_e2e`` and ``test_e2e_tables``)."""
    from tests.airflow.e2e_scenario import run_scenario  # after AIRFLOW_HOME is set above

    return run_scenario(deployment, lake, tmp_path_factory)
