"""A real Dagster deployment for one test session: a code server, the webserver and the daemon
on PostgreSQL storage, sized for 2 cores.

* a fresh database ``dagster_e2e_<random>`` on the test PostgreSQL server (dropped at the end:
  other sessions share the server); graveler keeps its refs in the same database (the
  resource's default);
* ``dagster.yaml`` is the block documented in docs/dagster.md (dagster-postgres with
  ``scheme: postgresql+psycopg2``, ``QueuedRunCoordinator`` with 4 runs at once,
  ``DefaultRunLauncher``: one process per run, started by the code server), its
  ``DAGSTER_PG_*`` variables pointing at the fresh database; sensors tick as often as the
  daemon allows;
* every process is started here in its own session and stopped by its process group;
* runs are launched the way users launch them: GraphQL against the webserver, or the
  ``dagster`` CLI against the instance.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from dagster import DagsterInstance, DagsterRun, DagsterRunStatus
from dagster._core.instance.ref import InstanceRef
from dagster_graphql import DagsterGraphQLClient

BIN = Path(sys.executable).parent
DEFS = Path(__file__).with_name("defs.py")
LOCATION = "graveler_e2e"
REPOSITORY = "__repository__"
FINISHED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}

DOCS_PAGE = Path(__file__).resolve().parents[3] / "docs" / "dagster.md"


def documented_dagster_yaml() -> str:
    """The ``dagster.yaml`` block of docs/dagster.md: the deployment runs what users read."""
    text = DOCS_PAGE.read_text()
    start = text.index('```yaml title="dagster.yaml"\n') + len('```yaml title="dagster.yaml"\n')
    return text[start : text.index("```", start)]


WORKSPACE_YAML = """\
load_from:
  - grpc_server:
      host: 127.0.0.1
      port: {port}
      location_name: {location}
"""

REEXECUTE = """
mutation($parent: String!) {
  launchRunReexecution(reexecutionParams: {parentRunId: $parent, strategy: FROM_FAILURE}) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
  }
}"""

SENSOR = """
query($selector: SensorSelector!) {
  sensorOrError(sensorSelector: $selector) {
    __typename
    ... on Sensor { id sensorState { status ticks(limit: 1) { cursor } } }
  }
}"""

SENSOR_TICKS = """
query($selector: SensorSelector!) {
  sensorOrError(sensorSelector: $selector) {
    __typename
    ... on Sensor { sensorState { ticks(limit: 50) { status skipReason } } }
  }
}"""

STOP_SENSOR = """
mutation($id: String!) {
  stopSensor(id: $id) { __typename ... on PythonError { message } }
}"""

START_SENSOR = """
mutation($selector: SensorSelector!) {
  startSensor(sensorSelector: $selector) { __typename ... on PythonError { message } }
}"""

DAEMONS = """
{ instance { daemonHealth { allDaemonStatuses { daemonType healthy } } } }
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Callable[[], Any], what: str, timeout: float = 120.0) -> Any:
    """Poll ``check`` until it returns something truthy; AssertionError naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = check()
        except Exception as exc:  # the service is not up yet
            found, last = None, exc
        else:
            last = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} ({last!r})")
        time.sleep(0.5)


@dataclass
class Deployment:
    """A running deployment (see the module docstring)."""

    root: Path
    admin_url: str
    db: str
    env: dict[str, str]
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    client: DagsterGraphQLClient | None = None
    instance: DagsterInstance | None = None
    saved_env: dict[str, str | None] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "dagster_home"

    @property
    def workdir(self) -> Path:
        return self.root / "work"

    # --- processes --------------------------------------------------------------------------

    def start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 -- kept open for the process
        proc = subprocess.Popen(
            [str(BIN / args[0]), *args[1:]],
            env=self.env,
            cwd=self.workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in reversed(self.procs):
            _stop(proc)
        self.procs.clear()

    def logs(self) -> str:
        """The tail of every process log, for failure messages."""
        tails = []
        for log in sorted(self.root.glob("*.log")):
            tails.append(f"--- {log.name}\n" + log.read_text(errors="replace")[-3000:])
        return "\n".join(tails)

    # --- GraphQL ----------------------------------------------------------------------------

    def gql(self, query: str, **variables: Any) -> dict[str, Any]:
        assert self.client is not None
        return self.client._execute(query, variables)  # type: ignore[no-any-return]

    def launch(self, job: str, tags: dict[str, str] | None = None) -> str:
        assert self.client is not None
        return self.client.submit_job_execution(job, LOCATION, REPOSITORY, tags=tags)

    def reexecute_from_failure(self, parent: str) -> str:
        out = self.gql(REEXECUTE, parent=parent)["launchRunReexecution"]
        assert out["__typename"] == "LaunchRunSuccess", out
        return str(out["run"]["runId"])

    def sensor(self, name: str) -> dict[str, Any]:
        out = self.gql(SENSOR, selector=self.selector(name))["sensorOrError"]
        assert out["__typename"] == "Sensor", out
        return out  # type: ignore[no-any-return]

    def skip_reasons(self, name: str) -> list[str]:
        """The skip reasons of the sensor's recent ticks (a refused merge says why there)."""
        out = self.gql(SENSOR_TICKS, selector=self.selector(name))["sensorOrError"]
        assert out["__typename"] == "Sensor", out
        ticks = out["sensorState"]["ticks"]
        return [str(t["skipReason"]) for t in ticks if t.get("skipReason")]

    def stop_sensor(self, name: str) -> None:
        out = self.gql(STOP_SENSOR, id=self.sensor(name)["id"])["stopSensor"]
        assert out["__typename"] == "StopSensorMutationResult", out

    def start_sensor(self, name: str) -> None:
        out = self.gql(START_SENSOR, selector=self.selector(name))["startSensor"]
        assert out["__typename"] == "Sensor", out

    def selector(self, sensor: str) -> dict[str, str]:
        return {
            "repositoryLocationName": LOCATION,
            "repositoryName": REPOSITORY,
            "sensorName": sensor,
        }

    def daemons_healthy(self) -> bool:
        statuses = self.gql(DAEMONS)["instance"]["daemonHealth"]["allDaemonStatuses"]
        healthy = {s["daemonType"] for s in statuses if s["healthy"]}
        return {"SENSOR", "QUEUED_RUN_COORDINATOR"} <= healthy

    # --- CLI and runs -----------------------------------------------------------------------

    def cli_materialize(self, select: str) -> None:
        """``dagster asset materialize -f defs.py --select ...`` against the instance."""
        done = subprocess.run(
            [str(BIN / "dagster"), "asset", "materialize", "-f", str(DEFS), "--select", select],
            env=self.env,
            cwd=self.workdir,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]

    def run(self, run_id: str) -> DagsterRun:
        assert self.instance is not None
        found = self.instance.get_run_by_id(run_id)
        assert found is not None, run_id
        return found

    def wait_finished(self, *run_ids: str, timeout: float = 180.0) -> list[DagsterRun]:
        def finished() -> list[DagsterRun] | None:
            found = [self.run(r) for r in run_ids]
            return found if all(r.status in FINISHED for r in found) else None

        try:
            return wait_for(finished, f"runs {run_ids} to finish", timeout)  # type: ignore[no-any-return]
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.logs()}") from None

    def wait_tag(self, run_id: str, key: str, value: str, timeout: float = 60.0) -> None:
        what = f"run {run_id} to be tagged {key}={value}"
        try:
            wait_for(lambda: self.run(run_id).tags.get(key) == value, what, timeout)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.logs()}") from None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group started with ``proc``, SIGKILL after 10 s."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


def create_database(admin_url: str) -> str:
    """A fresh database on the server of ``admin_url`` (a psycopg URL); returns its name."""
    name = f"dagster_e2e_{secrets.token_hex(6)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def drop_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def deploy(root: Path, admin_url: str, sensor_interval: int = 1) -> Deployment:
    """Create the database and files, start code server, webserver and daemon, and wait until
    the code location is loaded and the daemon is healthy."""
    info = psycopg.conninfo.conninfo_to_dict(admin_url.replace("postgresql+psycopg", "postgresql"))
    db = create_database(admin_url.replace("postgresql+psycopg", "postgresql"))
    env = dict(os.environ)
    env.update(
        DAGSTER_HOME=str(root / "dagster_home"),
        GRAVELER_E2E_DIR=str(root / "work"),
        GRAVELER_E2E_SENSOR_INTERVAL=str(sensor_interval),
        DAGSTER_PG_USERNAME=info["user"],
        DAGSTER_PG_PASSWORD=info["password"],
        DAGSTER_PG_HOST=info.get("host", "127.0.0.1"),
        DAGSTER_PG_PORT=str(info.get("port", 5432)),
        DAGSTER_PG_DB=db,
    )
    dep = Deployment(root, admin_url, db, env)
    dep.home.mkdir(parents=True)
    dep.workdir.mkdir()
    (dep.home / "dagster.yaml").write_text(documented_dagster_yaml())
    try:
        _start_services(dep)
    except BaseException:
        teardown(dep)
        raise
    return dep


def _start_services(dep: Deployment) -> None:
    grpc_port, web_port = free_port(), free_port()
    workspace = dep.root / "workspace.yaml"
    workspace.write_text(WORKSPACE_YAML.format(port=grpc_port, location=LOCATION))
    dep.start(
        "code-server", "dagster", "api", "grpc", "-f", str(DEFS), "-h", "127.0.0.1",
        "-p", str(grpc_port), "--location-name", LOCATION,
    )  # fmt: skip
    dep.start("daemon", "dagster-daemon", "run", "-w", str(workspace))
    dep.start(
        "webserver", "dagster-webserver", "-w", str(workspace), "-h", "127.0.0.1",
        "-p", str(web_port),
    )  # fmt: skip
    # this process reads the instance too: its dagster.yaml takes the settings from the
    # environment (restored by teardown)
    dep.saved_env = {k: os.environ.get(k) for k in dep.env if k.startswith("DAGSTER_PG_")}
    os.environ.update({k: dep.env[k] for k in dep.saved_env})
    dep.instance = DagsterInstance.from_ref(InstanceRef.from_dir(str(dep.home)))
    dep.client = wait_for(
        lambda: _client(web_port), "the webserver to serve the code location", timeout=240
    )
    wait_for(dep.daemons_healthy, "the daemon to report healthy", timeout=120)


def _client(port: int) -> DagsterGraphQLClient | None:
    client = DagsterGraphQLClient("127.0.0.1", port_number=port, timeout=60)
    repos = client._execute(
        "{ repositoriesOrError { ... on RepositoryConnection { nodes { name } } } }"
    )["repositoriesOrError"]
    return client if repos.get("nodes") else None


def teardown(dep: Deployment) -> None:
    """Stop every process, close the instance, drop the database."""
    dep.stop_all()
    if dep.instance is not None:
        dep.instance.dispose()
    for key, value in dep.saved_env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    drop_database(dep.admin_url.replace("postgresql+psycopg", "postgresql"), dep.db)
