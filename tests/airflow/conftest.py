"""Fixtures for the Airflow provider tests: one migrated Airflow metadata database
(SQLite, temporary AIRFLOW_HOME) and two DAG-running worker processes, both set up once for
the tests/airflow package and shut down after its last test.

AIRFLOW_HOME and friends are set for this process as well, before anything imports Airflow,
so the unit tests that import ``airflow.sdk`` never touch ``~/airflow``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from graveler.client import Graveler
from graveler.repository import Repository
from tests.airflow.harness import AirflowEnv, Workers, airflow_cli, make_env

_BASE = Path(tempfile.mkdtemp(prefix="graveler-airflow-"))
atexit.register(shutil.rmtree, _BASE, True)
AIRFLOW = make_env(_BASE)
os.environ.update({k: v for k, v in AIRFLOW.env.items() if k.startswith("AIRFLOW")})
for _entry in AIRFLOW.env["PYTHONPATH"].split(os.pathsep):
    if _entry and _entry not in sys.path:
        sys.path.append(_entry)


@pytest.fixture(scope="package")
def airflow_env() -> AirflowEnv:
    """The session's Airflow, its metadata database migrated by ``airflow db migrate``."""
    done = airflow_cli(AIRFLOW, "db", "migrate")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return AIRFLOW


@pytest.fixture(scope="package")
def workers(airflow_env: AirflowEnv) -> Iterator[Workers]:
    pool = Workers(airflow_env.env)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture
def client(airflow_env: AirflowEnv) -> Iterator[Graveler]:
    """A graveler client of this process on the same refs database as the DAGs."""
    gv = Graveler(home=airflow_env.graveler_home, database_url=airflow_env.database_url)
    try:
        yield gv
    finally:
        gv.close()


@pytest.fixture
def lake(client: Graveler) -> Repository:
    """A fresh repository for one test (its name goes into the DAG run's conf)."""
    return client.create_repository(f"t-{uuid.uuid4().hex[:10]}")
