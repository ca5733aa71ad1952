"""A real Airflow 3 deployment for the tests, as a team runs it: PostgreSQL metadata database,
LocalExecutor, and the api-server, scheduler, dag-processor and triggerer as separate
processes, configured from the ``airflow.cfg`` block of ``docs/airflow.md`` (so the documented
configuration is the tested one) plus test-only tuning (tight heartbeats and polling).

One deployment per test session: a fresh database ``airflow_e2e_<random>`` on the shared
server (dropped afterwards), free ports, every process started here in its own process group
and stopped by that group's ID. Graveler's refs live in the same database (the provider's DB
manager creates its tables during ``airflow db migrate``), as the documentation recommends.
The tests drive Airflow through its REST API only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from tests.docs.blocks import page_blocks

ROOT = Path(__file__).resolve().parents[2]
TEST_DAGS = Path(__file__).with_name("dags")
EXAMPLE_DAGS = ROOT / "dags_examples" / "airflow"
DOCS_PAGE = ROOT / "docs" / "airflow.md"
COMPONENTS = ("api-server", "scheduler", "dag-processor", "triggerer")
DOCUMENTED_URL = "postgresql+psycopg://airflow:airflow@db:5432/airflow"

#: Test-only tuning on top of the documented configuration: a 2-core machine, short polling.
TUNING = {
    "AIRFLOW__CORE__PARALLELISM": "12",
    "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
    "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
    "AIRFLOW__CORE__DEFAULT_TASK_RETRY_DELAY": "1",
    "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "1",
    "AIRFLOW__SCHEDULER__JOB_HEARTBEAT_SEC": "1",
    "AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": "0.2",
    "AIRFLOW__TRIGGERER__JOB_HEARTBEAT_SEC": "1",
    "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
    "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "600",
    "AIRFLOW__DAG_PROCESSOR__PARSING_PROCESSES": "1",
    "AIRFLOW__DAG_PROCESSOR__PRINT_STATS_INTERVAL": "600",
    "AIRFLOW__API__WORKERS": "1",
    "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
}


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def documented_config() -> str:
    """The ``ini title="airflow.cfg"`` block of docs/airflow.md."""
    blocks = [b for b in page_blocks(DOCS_PAGE) if b.lang == "ini" and b.title == "airflow.cfg"]
    if len(blocks) != 1:
        raise AssertionError("docs/airflow.md needs exactly one airflow.cfg block")
    return blocks[0].code


@dataclass
class Deployment:
    """One Airflow deployment on a fresh PostgreSQL database; see the module docstring."""

    base: Path
    admin_url: str
    database: str = field(default_factory=lambda: f"airflow_e2e_{uuid.uuid4().hex[:10]}")
    api_port: int = field(default_factory=free_port)
    env: dict[str, str] = field(default_factory=dict)
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.base / "airflow"

    @property
    def graveler_home(self) -> Path:
        return self.base / "graveler-home"

    @property
    def database_url(self) -> str:
        url = make_url(self.admin_url).set(database=self.database)
        return url.render_as_string(hide_password=False)

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Create the database, lay out AIRFLOW_HOME, migrate, start every component and wait
        until the api-server reports them all healthy and the DAGs are parsed."""
        started = time.monotonic()
        self._create_database()
        self._layout()
        migrated = self.cli("db", "migrate", timeout=600)
        if migrated.returncode != 0:
            raise AssertionError("airflow db migrate failed:\n" + migrated.stderr[-4000:])
        self.timings["migrate"] = time.monotonic() - started
        logs = self.base / "logs"
        logs.mkdir(exist_ok=True)
        airflow = str(Path(sys.executable).with_name("airflow"))
        for name in COMPONENTS:
            args = [airflow, name] + (
                ["--port", str(self.api_port)] if name == "api-server" else []
            )
            with open(logs / f"{name}.log", "wb") as out:
                self.procs[name] = subprocess.Popen(
                    args,
                    env=self.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
        self.wait(self._healthy, "every component to report healthy", 240)
        self.timings["healthy"] = time.monotonic() - started

    def stop(self) -> None:
        """Stop every component (its whole process group), then drop the database."""
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.1, deadline - time.monotonic()))
        for proc in self.procs.values():
            # The group may outlive its leader (forked workers): end what is left of it.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        self._drop_database()

    def _create_database(self) -> None:
        engine = create_engine(self.admin_url, isolation_level="AUTOCOMMIT", pool_size=1)
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql(f'CREATE DATABASE "{self.database}"')
        finally:
            engine.dispose()

    def _drop_database(self) -> None:
        engine = create_engine(self.admin_url, isolation_level="AUTOCOMMIT", pool_size=1)
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        finally:
            engine.dispose()

    def _layout(self) -> None:
        dags = self.home / "dags"
        dags.mkdir(parents=True)
        for source in [*TEST_DAGS.glob("*.py"), *EXAMPLE_DAGS.glob("*_dag.py")]:
            shutil.copy(source, dags / source.name)
        (self.home / "airflow.cfg").write_text(self._config())
        conn = {
            "conn_type": "graveler",
            "extra": {"database_url": self.database_url, "home": str(self.graveler_home)},
        }
        path = [str(ROOT), str(ROOT / "providers"), os.environ.get("PYTHONPATH", "")]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "PYSPARK"))}
        self.env = {
            **env,
            **TUNING,
            "AIRFLOW_HOME": str(self.home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW_CONN_GRAVELER_DEFAULT": json.dumps(conn),
            "PYTHONPATH": os.pathsep.join(p for p in path if p),
            "GRAVELER_COMMITTER": "airflow-e2e",
        }

    def _config(self) -> str:
        """The documented airflow.cfg with this deployment's database, API and secrets."""
        text = documented_config().replace(DOCUMENTED_URL, self.database_url)
        text = text.replace("http://airflow-api:8080", self.api)
        return re.sub(r"(?m)^(secret_key|jwt_secret) = .*$", rf"\1 = {uuid.uuid4().hex}", text)

    def cli(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """The real ``airflow`` command line in this deployment's environment."""
        airflow = str(Path(sys.executable).with_name("airflow"))
        return subprocess.run(
            [airflow, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )

    def _healthy(self) -> bool:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                log = (self.base / "logs" / f"{name}.log").read_text(errors="replace")
                raise AssertionError(f"airflow {name} exited ({proc.returncode}):\n{log[-4000:]}")
        try:
            health = self.get("/api/v2/monitor/health")
        except (httpx.HTTPError, AssertionError):
            return False
        parts = ("metadatabase", "scheduler", "triggerer", "dag_processor")
        return all((health.get(p) or {}).get("status") == "healthy" for p in parts)

    # --- REST API -----------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        response = httpx.request(method, self.api + path, json=body, timeout=60)
        if response.status_code >= 400:
            raise AssertionError(f"{method} {path}: {response.status_code} {response.text[:2000]}")
        return response.json() if response.content else None

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def wait_for_dags(self, *dag_ids: str, timeout: float = 180) -> None:
        """Until the dag-processor has parsed every one of ``dag_ids`` without import errors."""

        def parsed() -> bool:
            errors = self.get("/api/v2/importErrors")["import_errors"]
            if errors:
                raise AssertionError(f"DAG import errors: {errors}")
            known = {d["dag_id"] for d in self.get("/api/v2/dags?limit=100")["dags"]}
            return set(dag_ids) <= known

        self.wait(parsed, f"DAGs {dag_ids} to be parsed", timeout)

    def trigger(self, dag_id: str, run_id: str, conf: Mapping[str, Any] | None = None) -> str:
        body = {"dag_run_id": run_id, "logical_date": None, "conf": dict(conf or {})}
        return str(self.request("POST", f"/api/v2/dags/{dag_id}/dagRuns", body)["dag_run_id"])

    def run_state(self, dag_id: str, run_id: str) -> str:
        return str(self.get(f"/api/v2/dags/{dag_id}/dagRuns/{run_id}")["state"])

    def wait_finished(self, runs: list[tuple[str, str]], timeout: float = 300) -> dict[str, str]:
        """Until every (dag_id, run_id) is success or failed; their final states by run id."""
        states: dict[str, str] = {}

        def finished() -> bool:
            for dag_id, run_id in runs:
                states[run_id] = self.run_state(dag_id, run_id)
            return all(s in ("success", "failed") for s in states.values())

        self.wait(finished, f"runs {[r for _, r in runs]} to finish", timeout)
        return states

    def tasks(self, dag_id: str, run_id: str) -> dict[str, dict[str, Any]]:
        """The run's task instances by task id (state, try_number, ...)."""
        found = self.get(f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances")
        return {ti["task_id"]: ti for ti in found["task_instances"]}

    def xcom(self, dag_id: str, run_id: str, task_id: str, key: str = "return_value") -> Any:
        path = f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/xcomEntries/{key}"
        return self.get(path + "?deserialize=true")["value"]

    def clear(self, dag_id: str, run_id: str, task_ids: list[str] | None = None) -> None:
        body: dict[str, Any] = {"dag_run_id": run_id, "dry_run": False, "only_failed": False}
        if task_ids is not None:
            body["task_ids"] = task_ids
        self.request("POST", f"/api/v2/dags/{dag_id}/clearTaskInstances", body)

    def task_log(self, dag_id: str, run_id: str, task_id: str, try_number: int) -> str:
        """The text of a task try's log (its events' messages, one a line)."""
        path = f"/api/v2/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/logs/{try_number}"
        doc = self.get(path + "?full_content=true")
        lines = []
        for entry in doc.get("content") or []:
            if isinstance(entry, dict):
                lines.append(" ".join(str(entry.get(k, "")) for k in ("event", "error_detail")))
            else:
                lines.append(str(entry))
        return "\n".join(lines)

    def timeline(self, runs: list[tuple[str, str]]) -> str:
        """Each run's task instances with their queued, start and end times (for diagnosis)."""
        rows = []
        for dag_id, run_id in runs:
            try:
                found = self.tasks(dag_id, run_id)
            except (AssertionError, httpx.HTTPError) as exc:
                rows.append(f"{run_id:16} ({exc})"[:200])
                continue
            for ti in found.values():
                times = [
                    str(ti.get(k) or "-")[11:23] for k in ("queued_when", "start_date", "end_date")
                ]
                state = f"{ti['state']!s:16} {ti['try_number']}"
                rows.append(f"{run_id:16} {ti['task_id']:22} {state} {' '.join(times)}")
        return "\n".join(rows)

    def asset(self, uri: str) -> dict[str, Any] | None:
        found = self.get(f"/api/v2/assets?uri_pattern={uri}&limit=100")["assets"]
        exact = [a for a in found if a["uri"] == uri]
        return exact[0] if exact else None

    def asset_events(self, uri: str) -> list[dict[str, Any]]:
        asset = self.asset(uri)
        if asset is None:
            return []
        return list(
            self.get(f"/api/v2/assets/events?asset_id={asset['id']}&limit=100")["asset_events"]
        )

    def dag_runs(self, dag_id: str) -> list[dict[str, Any]]:
        return list(self.get(f"/api/v2/dags/{dag_id}/dagRuns?limit=100")["dag_runs"])

    @staticmethod
    def wait(predicate: Callable[[], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
            time.sleep(0.25)
