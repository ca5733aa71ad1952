"""A real Airflow 3 installation for the tests: a temporary AIRFLOW_HOME with an SQLite
metadata database, migrated once per session by ``airflow db migrate``, and worker processes
that run DAGs end to end with ``dag.test()`` (what ``airflow dags test`` runs).

Workers are long-lived spawned processes (Airflow is imported and its in-process execution
API built once per worker); two of them let two DAG runs overlap. The pytest process itself
never runs DAGs. Graveler's refs live in the Airflow metadata database (its tables created by
the provider's DB manager during ``airflow db migrate``).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TEST_DAGS = Path(__file__).with_name("dags")
EXAMPLE_DAGS = ROOT / "dags_examples" / "airflow"
ENTRY_POINT = "graveler_airflow.get_provider_info:get_provider_info"


@dataclass
class AirflowEnv:
    """Paths and environment of the session's Airflow installation."""

    base: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.base / "airflow"

    @property
    def metadata_db(self) -> Path:
        return self.home / "airflow.db"

    @property
    def database_url(self) -> str:
        return f"sqlite:///{self.metadata_db}"

    @property
    def graveler_home(self) -> Path:
        return self.base / "graveler-home"


def make_env(base: Path) -> AirflowEnv:
    """Lay out AIRFLOW_HOME (dags folder with the test and example DAGs) and its environment."""
    ae = AirflowEnv(base)
    dags = ae.home / "dags"
    dags.mkdir(parents=True)
    for source in [*TEST_DAGS.glob("*.py"), *EXAMPLE_DAGS.glob("*_dag.py")]:
        shutil.copy(source, dags / source.name)
    path = [str(ROOT), str(ROOT / "providers")]
    shim = provider_shim(base)
    if shim is not None:
        path.insert(0, str(shim))
    conn = {
        "conn_type": "graveler",
        "extra": {"database_url": ae.database_url, "home": str(ae.graveler_home)},
    }
    ae.env = {
        "AIRFLOW_HOME": str(ae.home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",  # asset-scheduled DAGs get queued
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": ae.database_url,
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        "AIRFLOW_CONN_GRAVELER_DEFAULT": json.dumps(conn),
        "PYTHONPATH": os.pathsep.join([*path, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "GRAVELER_COMMITTER": "airflow-tests",
    }
    return ae


def provider_shim(base: Path) -> Path | None:
    """When the installed ``graveler`` distribution predates the provider's entry point (a
    shared development venv), a directory with distribution metadata that declares it, for
    PYTHONPATH; None when the installed metadata already has it."""
    eps = importlib.metadata.entry_points(group="apache_airflow_provider")
    if any(ep.value == ENTRY_POINT for ep in eps):
        return None
    site = base / "provider-shim"
    info = site / "graveler-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: graveler\nVersion: 0.1.0\n")
    entry_points = f"[apache_airflow_provider]\nprovider_info = {ENTRY_POINT}\n"
    (info / "entry_points.txt").write_text(entry_points)
    return site


def airflow_cli(
    ae: AirflowEnv, *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the real ``airflow`` command line in the session's environment."""
    airflow = Path(sys.executable).with_name("airflow")
    return subprocess.run(
        [str(airflow), *args],
        env={**os.environ, **ae.env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# --- worker side (runs in spawned processes) -----------------------------------------------


def init_worker(env: Mapping[str, str]) -> None:
    """Configure Airflow before importing it and build the in-process execution API."""
    os.environ.update(env)
    # Like a real Airflow worker: no PYSPARK_PYTHON from the Spark tests of this session, so
    # DAGs that run PySpark must point Spark's Python workers at their interpreter themselves.
    os.environ.pop("PYSPARK_PYTHON", None)
    for entry in reversed(env["PYTHONPATH"].split(os.pathsep)):
        if entry and entry not in sys.path:
            sys.path.insert(0, entry)
    from airflow.sdk.execution_time.supervisor import InProcessTestSupervisor

    InProcessTestSupervisor._api_client().get("health")


def run_dag(dag_id: str, conf: Mapping[str, Any], logical_date: str) -> dict[str, Any]:
    """One real DAG run (parse, serialize, schedule, execute every task); a JSON summary."""
    from airflow.utils.cli import get_bagged_dag

    dag = get_bagged_dag(None, dag_id)
    run = dag.test(logical_date=datetime.fromisoformat(logical_date), run_conf=dict(conf))
    return summarize(dag_id, run.run_id)


def summarize(dag_id: str, run_id: str) -> dict[str, Any]:
    """The run's state, its task states and the tasks' return values."""
    from airflow.models.dagrun import DagRun
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        run = session.scalar(select(DagRun).where(DagRun.dag_id == dag_id, DagRun.run_id == run_id))
        assert run is not None
        tasks = {ti.task_id: str(ti.state) for ti in run.get_task_instances(session=session)}
        rows = session.scalars(XComModel.get_many(run_id=run_id, dag_ids=dag_id)).all()
        xcoms = {f"{x.task_id}:{x.key}": XComModel.deserialize_value(x) for x in rows}
        return {"run_id": run_id, "state": str(run.state), "tasks": tasks, "xcoms": xcoms}


def asset_activity(uri: str) -> dict[str, Any]:
    """Events recorded for the asset ``uri`` and the DAGs queued to run because of them."""
    from airflow.models.asset import AssetDagRunQueue, AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        asset = session.scalar(select(AssetModel).where(AssetModel.uri == uri))
        if asset is None:
            return {"events": [], "queued": []}
        events = session.scalars(select(AssetEvent).where(AssetEvent.asset_id == asset.id)).all()
        queued = session.scalars(
            select(AssetDagRunQueue.target_dag_id).where(AssetDagRunQueue.asset_id == asset.id)
        ).all()
        return {"events": [dict(e.extra) for e in events], "queued": sorted(queued)}


def provider_view() -> dict[str, Any]:
    """What Airflow's providers managers (core and task runtime) discovered about graveler."""
    from airflow.providers_manager import ProvidersManager
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    core, runtime = ProvidersManager(), ProvidersManagerTaskRuntime()
    hook = runtime.hooks.get("graveler")
    return {
        "providers": sorted(core.providers),
        "hook": hook.hook_class_name if hook else None,
        "hook_name": hook.hook_name if hook else None,
        "connection_testable": hook.connection_testable if hook else None,
        "asset_schemes": sorted(runtime.asset_uri_handlers),
        "asset_factories": sorted(runtime.asset_factories),
        "db_managers": list(core.db_managers),
        "widgets": sorted(k for k in core.connection_form_widgets if "__graveler__" in k),
        "behaviour": core.field_behaviours.get("graveler"),
        "triggers": sorted(
            t.trigger_class_name for t in core.trigger if t.package_name == "graveler"
        ),
    }


# --- pytest side ---------------------------------------------------------------------------


class Workers:
    """Two single-process executors, so that two runs given to different workers overlap."""

    def __init__(self, env: Mapping[str, str]) -> None:
        ctx = get_context("spawn")
        self._pools = [
            ProcessPoolExecutor(1, mp_context=ctx, initializer=init_worker, initargs=(dict(env),))
            for _ in range(2)
        ]
        self._clock = datetime(2024, 1, 1, tzinfo=UTC)

    def logical_date(self) -> str:
        """A fresh logical date per run, so run IDs never collide."""
        self._clock += timedelta(minutes=1)
        return self._clock.isoformat()

    def submit(self, worker: int, fn: Any, *args: Any) -> Future[Any]:
        return self._pools[worker].submit(fn, *args)

    def start_run(self, dag_id: str, conf: Mapping[str, Any], worker: int = 0) -> Future[Any]:
        return self.submit(worker, run_dag, dag_id, dict(conf), self.logical_date())

    def run(self, dag_id: str, conf: Mapping[str, Any], worker: int = 0) -> dict[str, Any]:
        return self.start_run(dag_id, conf, worker).result(timeout=600)

    def call(self, fn: Any, *args: Any, worker: int = 0) -> Any:
        return self.submit(worker, fn, *args).result(timeout=120)

    def close(self) -> None:
        for pool in self._pools:
            pool.shutdown(wait=True, cancel_futures=True)


def wait_for(predicate: Any, what: str, timeout: float = 120.0) -> None:
    """Poll ``predicate`` until it is true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
