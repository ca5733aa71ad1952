"""The Airflow end-to-end scenario (:mod:`tests.airflow.test_e2e` and
:mod:`tests.airflow.test_e2e_tables` check what it leaves): the real Airflow of
:mod:`tests.airflow.deployment` (scheduler, dag-processor, triggerer and api-server on
PostgreSQL with LocalExecutor), driven through its REST API, run once per session by the
package's ``scenario`` fixture.

Phase 1, all at once: a deferred object sensor, four concurrent run-branch runs (one of
them retried), two runs whose writes conflict, a run that fails and keeps its branch, a run
that fails and discards it, the example ETL DAG (PySpark), two concurrent runs appending to
one Delta table and an overwrite racing an append, two concurrent runs appending to one
Iceberg table, two replacing one (a conflict), and two runs of the example Iceberg DAG.
Phase 2: clear the merge task of a finished run, clear a whole finished run, prune kept
branches (operator and CLI).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.versioning import runs
from tests.airflow.deployment import Deployment
from tests.tables.delta import ops
from tests.tables.delta.workdir import checkout, publish

RUNS = "e2e_runs"
DELTA = "e2e_delta"
DELTA_TABLE = "tables/delta_events/"
DELTA_APPENDS = ["d-append-1", "d-append-2"]
DELTA_RACE = ["d-race-append", "d-race-overwrite"]  # the overwrite merges second
CONCURRENT = [f"r-concurrent-{i}" for i in range(1, 5)]
CONFLICTING = ["r-conflict-1", "r-conflict-2"]
ETL = "graveler_example_etl"
ICEBERG = "e2e_iceberg"
ICEBERG_APPENDS = ["i-append-1", "i-append-2"]
ICEBERG_REPLACES = ["i-replace-1", "i-replace-2"]
ICEBERG_EXAMPLE = "graveler_example_iceberg"
EXAMPLE_RUNS = ["ex-1", "ex-2"]
ICEBERG_RUNS = [(ICEBERG, r) for r in [*ICEBERG_APPENDS, *ICEBERG_REPLACES]] + [
    (ICEBERG_EXAMPLE, r) for r in EXAMPLE_RUNS
]
ALL_RUNS = (
    [(RUNS, r) for r in [*CONCURRENT, *CONFLICTING, "r-failed"]]
    + [(DELTA, r) for r in [*DELTA_APPENDS, *DELTA_RACE]]
    + ICEBERG_RUNS
    + [
        ("e2e_discard", "f-1"),
        ("e2e_sensor", "s-1"),
        ("e2e_prune", "p-1"),
        ("e2e_operators", "o-1"),
        (ETL, "etl-good"),
        (ETL, "etl-bad"),
    ]
)
GATE = "gates/sensor-deferred"
GOOD = "city,temp_c\nLisbon,21.5\nOslo,4.0\nQuito,\n"
BAD = "city,temp_c\nAtlantis,999.0\n"  # validate refuses it: main must never see it


@dataclass
class Scenario:
    """What the scenario did and saw."""

    states: dict[str, str] = field(default_factory=dict)
    merges: dict[str, str] = field(default_factory=dict)  # run id -> merge task's return
    sensor_deferred: bool = False
    cleared: dict[str, str] = field(default_factory=dict)  # run id -> state after the clear
    pruned: list[str] = field(default_factory=list)
    cli_pruned: list[str] = field(default_factory=list)
    watched: list[str] = field(default_factory=list)  # commits made under watched/
    seconds: dict[str, float] = field(default_factory=dict)


def identity(dag_id: str, run_id: str) -> str:
    return f"airflow/{dag_id}/{run_id}/run"


def _concurrent_conf(i: int) -> dict[str, Any]:
    writes = {f"tables/events/part={i}/data.csv": f"id\n{i}\n", f"tables/declared/r{i}.csv": "x\n"}
    if i == 3:
        writes["tables/undeclared/r3.csv"] = "nobody declares this table\n"
    if i == 4:
        writes["signals/ready.csv"] = "go\n"
    barrier = {"match": "r-concurrent", "count": 4}
    conf: dict[str, Any] = {"writes": writes, "barrier": barrier, "gate": GATE}
    return conf | ({"fail_first_try": True} if i == 2 else {})


def _run_etl(airflow: Deployment, landing: Path, run_id: str, text: str) -> None:
    """Trigger the example ETL DAG (PySpark) on ``text``, landed as a file."""
    (landing / f"{run_id}.csv").write_text(text)
    conf = {"repository": "weather", "landing": str(landing / f"{run_id}.csv")}
    airflow.trigger(ETL, run_id, conf)


def _sensor_deferred(airflow: Deployment) -> bool:
    sensor = airflow.tasks("e2e_sensor", "s-1").get("wait_for_signal", {})
    return sensor.get("state") == "deferred"


def _phase_one(airflow: Deployment, lake: Repository, seen: Scenario) -> None:
    """Everything at once; the concurrent runs wait at a gate the test opens once the sensor
    has deferred, so that the object it waits for lands while it waits in the triggerer."""
    airflow.trigger("e2e_sensor", "s-1")
    for i, run_id in enumerate(CONCURRENT, start=1):
        airflow.trigger(RUNS, run_id, _concurrent_conf(i))
    for run_id, text in zip(CONFLICTING, ("first\n", "second\n"), strict=True):
        writes = {"tables/shared/data.csv": text}
        airflow.trigger(
            RUNS, run_id, {"writes": writes, "barrier": {"match": "r-conflict", "count": 2}}
        )
    for i, run_id in enumerate(DELTA_APPENDS, start=1):
        conf = {"delta": {"mode": "append", "rows": [[10 + i, "a"]]}}
        airflow.trigger(DELTA, run_id, conf | {"barrier": {"match": "d-append", "count": 2}})
    race = {"barrier": {"match": "d-race", "count": 2}}
    airflow.trigger(DELTA, DELTA_RACE[0], race | {"delta": {"mode": "append", "rows": [[20, "a"]]}})
    overwrite = {"delta": {"mode": "overwrite", "rows": [[30, "a"]]}, "after": DELTA_RACE[0]}
    airflow.trigger(DELTA, DELTA_RACE[1], race | overwrite)
    airflow.trigger(RUNS, "r-failed", {"writes": {"tables/failed/x.csv": "kept\n"}, "fail": True})
    airflow.trigger("e2e_discard", "f-1", {"writes": {"tables/doomed/x.csv": "x\n"}, "fail": True})
    airflow.trigger("e2e_operators", "o-1")
    for table, mode, run_ids in (
        ("appends", "append", ICEBERG_APPENDS),
        ("replaces", "overwrite", ICEBERG_REPLACES),
    ):
        barrier = {"match": run_ids[0][:-2], "count": 2}
        for run_id in run_ids:
            airflow.trigger(ICEBERG, run_id, {"table": table, "mode": mode, "barrier": barrier})
    for run_id in EXAMPLE_RUNS:
        airflow.trigger(ICEBERG_EXAMPLE, run_id, {"repository": "e2e", "rows": 2})
    airflow.wait(lambda: _sensor_deferred(airflow), "the object sensor to defer", 300)
    seen.sensor_deferred = True
    lake.put("main", GATE, b"open")
    lake.commit("main", "open the gate")
    everything = [(RUNS, r) for r in [*CONCURRENT, *CONFLICTING, "r-failed"]]
    everything += [(DELTA, r) for r in [*DELTA_APPENDS, *DELTA_RACE]]
    everything += [("e2e_discard", "f-1"), ("e2e_sensor", "s-1"), ("e2e_operators", "o-1")]
    everything += ICEBERG_RUNS
    seen.states = airflow.wait_finished(everything, timeout=600)


def _phase_two(airflow: Deployment, seen: Scenario) -> None:
    airflow.clear(RUNS, "r-concurrent-1", ["run.merge"])  # the merge task of a finished run
    airflow.clear(RUNS, "r-concurrent-3")  # a whole finished run
    prefix = "airflow-e2e_runs-r-conflict"
    airflow.trigger("e2e_prune", "p-1", {"prefix": prefix})
    done = airflow.wait_finished(
        [(RUNS, "r-concurrent-1"), (RUNS, "r-concurrent-3"), ("e2e_prune", "p-1")]
    )
    seen.cleared = {r: done[r] for r in ("r-concurrent-1", "r-concurrent-3")}
    seen.states["p-1"] = done["p-1"]
    seen.pruned = airflow.xcom("e2e_prune", "p-1", "prune")


def _cli_prune(airflow: Deployment) -> list[str]:
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("graveler")),
            "--home",
            str(airflow.graveler_home),
            "--database-url",
            airflow.database_url,
            "--json",
            "branch",
            "prune",
            "graveler://e2e",
            "--older-than",
            "0s",
            "--prefix",
            "airflow-e2e_runs-r-failed",
        ],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [b["name"] for b in json.loads(done.stdout)["branches"]]


WATCHED = "graveler://e2e/main/watched"


def _feed_the_watcher(airflow: Deployment, repo: Repository, seen: Scenario) -> None:
    """Commit under watched/ on main until the asset watcher's trigger (in the triggerer)
    reports one: a commit that lands before the watcher took its starting head is, rightly,
    not an event, so a later one is made (at most three)."""
    for attempt in range(3):
        repo.put("main", f"watched/{attempt}.csv", b"x\n")
        seen.watched.append(repo.commit("main", f"watched {attempt}").id)
        try:
            airflow.wait(lambda: bool(airflow.asset_events(WATCHED)), "a watcher event", 60)
            return
        except AssertionError:
            continue


def run_scenario(
    deployment: Deployment, lake: Graveler, tmp_path_factory: pytest.TempPathFactory
) -> Scenario:
    """Run both phases on the deployment (the package's ``scenario`` fixture, once)."""
    seen = Scenario()
    e2e = lake.create_repository("e2e", (deployment.base / "e2e-namespace").as_uri())
    _delta_table(e2e, tmp_path_factory.mktemp("delta-table"))
    lake.create_repository("weather", (deployment.base / "weather-namespace").as_uri())
    lake.create_repository("ops", (deployment.base / "ops-namespace").as_uri())
    landing = tmp_path_factory.mktemp("landing")
    started = time.monotonic()
    try:
        _run_etl(deployment, landing, "etl-good", GOOD)  # the slowest run: first, waited last
        _phase_one(deployment, lake.repository("e2e"), seen)
        seen.seconds["phase 1"] = time.monotonic() - started
        for run_id in [*CONCURRENT, *CONFLICTING]:
            if seen.states[run_id] == "success":
                seen.merges[run_id] = deployment.xcom(RUNS, run_id, "run.merge")
        _phase_two(deployment, seen)
        seen.cli_pruned = _cli_prune(deployment)
        _feed_the_watcher(deployment, lake.repository("e2e"), seen)
        seen.seconds["phase 2"] = time.monotonic() - started - seen.seconds["phase 1"]
        seen.states |= deployment.wait_finished([(ETL, "etl-good")], timeout=900)
        _run_etl(deployment, landing, "etl-bad", BAD)  # after the good one: one Spark at a time
        seen.states |= deployment.wait_finished([(ETL, "etl-bad")], timeout=900)
    finally:
        seen.seconds["total"] = time.monotonic() - started
        print(f"\nAirflow e2e: {deployment.timings} {seen.seconds}")
        print(deployment.timeline(ALL_RUNS))
    return seen


def _delta_table(repo: Repository, work: Path) -> None:
    """The Delta table the e2e_delta runs change, created on main with delta-rs."""
    ops.run(work, {"op": "create", "rows": [[1, "a"], [2, "b"]]})
    publish(repo, "main", DELTA_TABLE, work, "a Delta table")


def delta_rows(repo: Repository, work: Path) -> list[list[Any]]:
    return ops.rows(checkout(repo, "main", DELTA_TABLE, work))


def publications(repo: Repository) -> dict[str, list[str]]:
    """Merge commits on main's first-parent history, by the run identity they carry."""
    found: dict[str, list[str]] = {}
    for commit in repo.log("main", first_parent=True):
        run = commit.metadata.get(runs.RUN_KEY)
        if run is not None:
            found.setdefault(run, []).append(commit.id)
    return found


def failure(deployment: Deployment, dag: str, run_id: str) -> str:
    """What went wrong in a run: its tasks' states and the log of its first failed task."""
    tasks = deployment.tasks(dag, run_id)
    failed = [t for t, info in tasks.items() if info.get("state") == "failed"]
    log = deployment.task_log(dag, run_id, failed[0], 1)[-4000:] if failed else ""
    return f"{dag} {run_id}: {tasks}\n{log}"
