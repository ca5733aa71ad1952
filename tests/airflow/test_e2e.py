"""Runs publish exactly once under the real Airflow: scheduler, dag-processor, triggerer and
api-server on PostgreSQL with LocalExecutor (:mod:`tests.airflow.deployment`).

One scenario drives the deployment through its REST API; the tests below check what it left
in Airflow and in the lake. Phase 1, all at once: a deferred object sensor, four concurrent
run-branch runs (one of them retried), two runs whose writes conflict, a run that fails and
keeps its branch, a run that fails and discards it, the example ETL DAG (PySpark), two
concurrent runs appending to one Iceberg table, two replacing one (a conflict), and two runs
of the example Iceberg DAG.
Phase 2: clear the merge task of a finished run, clear a whole finished
run, prune kept branches (operator and CLI).
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
from graveler_airflow import lineage
from graveler_airflow.naming import run_branch_name

from graveler import runs
from graveler.client import Graveler
from graveler.fsck import fsck
from graveler.repository import Repository
from tests.airflow.deployment import Deployment
from tests.tables.delta import ops
from tests.tables.delta.workdir import checkout, publish

# The first test's setup starts Airflow and runs the whole scenario (minutes on a busy machine).
pytestmark = pytest.mark.timeout(1800)

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


@pytest.fixture(scope="module")
def scenario(
    deployment: Deployment, lake: Graveler, tmp_path_factory: pytest.TempPathFactory
) -> Scenario:
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


def _delta_rows(repo: Repository, work: Path) -> list[list[Any]]:
    return ops.rows(checkout(repo, "main", DELTA_TABLE, work))


def _publications(repo: Repository) -> dict[str, list[str]]:
    """Merge commits on main's first-parent history, by the run identity they carry."""
    found: dict[str, list[str]] = {}
    for commit in repo.log("main", first_parent=True):
        run = commit.metadata.get(runs.RUN_KEY)
        if run is not None:
            found.setdefault(run, []).append(commit.id)
    return found


def test_concurrent_runs_and_a_retried_one_each_publish_exactly_once(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    repo = lake.repository("e2e")
    published = _publications(repo)
    for run_id in CONCURRENT:
        assert scenario.states[run_id] == "success", (run_id, deployment.tasks(RUNS, run_id))
        assert published[identity(RUNS, run_id)] == [scenario.merges[run_id]], run_id
        merge = deployment.tasks(RUNS, run_id)["run.merge"]
        assert merge["state"] == "success"
    branch = deployment.xcom(RUNS, "r-concurrent-1", "run.create_branch")
    links = deployment.get(
        f"/api/v2/dags/{RUNS}/dagRuns/r-concurrent-1/taskInstances/run.create_branch/links"
    )
    shown = links["extra_links"]  # what the task page of the UI shows
    assert shown == {"Graveler run branch": f"graveler://e2e/{branch}"}
    retried = deployment.tasks(RUNS, "r-concurrent-2")["run.write"]
    assert retried["try_number"] == 2 and retried["state"] == "success"
    for i in range(1, 5):
        assert repo.get("main", f"tables/events/part={i}/data.csv") == f"id\n{i}\n".encode()
    assert not [b.name for b in repo.list_branches() if "r-concurrent" in b.name]


def test_a_conflict_fails_once_without_retry_and_keeps_its_branch_as_it_says(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    repo = lake.repository("e2e")
    outcome = sorted(scenario.states[r] for r in CONFLICTING)
    assert outcome == ["failed", "success"], scenario.states
    winner = next(r for r in CONFLICTING if scenario.states[r] == "success")
    loser = next(r for r in CONFLICTING if scenario.states[r] == "failed")
    merge = deployment.tasks(RUNS, loser)["run.merge"]
    assert merge["state"] == "failed" and merge["try_number"] == 1  # retries=1, not retried
    log = deployment.task_log(RUNS, loser, "run.merge", 1)
    assert "Merge conflict publishing run" in log and "tables/shared/data.csv" in log
    assert "the run's writes are kept, committed as" in log
    assert identity(RUNS, loser) not in _publications(repo)
    expected = "first\n" if winner == "r-conflict-1" else "second\n"
    assert repo.get("main", "tables/shared/data.csv") == expected.encode()
    # The branch was kept as the message said, until the prune operator removed it.
    assert any(loser in name for name in scenario.pruned), scenario.pruned


def test_a_failed_run_keeps_main_untouched(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    repo = lake.repository("e2e")
    published = _publications(repo)
    assert scenario.states["r-failed"] == "failed"
    assert deployment.tasks(RUNS, "r-failed")["run.merge"]["state"] == "upstream_failed"
    assert identity(RUNS, "r-failed") not in published
    assert [n for n in scenario.cli_pruned if "r-failed" in n]  # kept, then pruned by the CLI
    assert scenario.states["f-1"] == "failed"
    discard = deployment.tasks("e2e_discard", "f-1")
    assert discard["run.discard"]["state"] == "success"
    assert identity("e2e_discard", "f-1") not in published
    names = [b.name for b in repo.list_branches()]
    assert not [n for n in names if "e2e_discard" in n or "r-failed" in n or "r-conflict" in n]
    with pytest.raises(LookupError):
        repo.stat("main", "tables/doomed/x.csv")


def test_clearing_a_finished_run_or_its_merge_never_merges_twice(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    repo = lake.repository("e2e")
    published = _publications(repo)
    assert scenario.cleared == {"r-concurrent-1": "success", "r-concurrent-3": "success"}
    for run_id in ("r-concurrent-1", "r-concurrent-3"):
        assert published[identity(RUNS, run_id)] == [scenario.merges[run_id]]
        assert deployment.xcom(RUNS, run_id, "run.merge") == scenario.merges[run_id]
    assert deployment.tasks(RUNS, "r-concurrent-3")["run.create_branch"]["try_number"] == 2
    assert not [b.name for b in repo.list_branches() if "r-concurrent" in b.name]


def test_the_deferred_sensor_resumed_with_the_commit_holding_the_object(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    assert scenario.sensor_deferred and scenario.states["s-1"] == "success"
    seen = deployment.xcom("e2e_sensor", "s-1", "wait_for_signal")
    repo = lake.repository("e2e")
    assert repo.stat(seen, "signals/ready.csv").size == 3
    assert seen in [c.id for c in repo.log("main", first_parent=True)]


def test_iceberg_runs_append_together_and_replace_in_conflict(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    """Two runs appending to one Iceberg table at once both land (graveler replays the
    second's snapshot on the first's); two replacing one conflict by Iceberg's rules: one
    merges, the other's merge fails once, not retried, and main keeps the winner's table."""
    from graveler.iceberg import GravelerCatalog

    repo = lake.repository("e2e")
    catalog = GravelerCatalog("e2e", repo)
    for dag, run_id in [(ICEBERG, r) for r in ICEBERG_APPENDS] + [
        (ICEBERG_EXAMPLE, r) for r in EXAMPLE_RUNS
    ]:
        assert scenario.states[run_id] == "success", _failure(deployment, dag, run_id)
    rows = catalog.load_table("main.iceberg.appends").scan().to_arrow().column("run")
    assert sorted(rows.to_pylist()) == [*ICEBERG_APPENDS, "seed"]
    example = catalog.load_table("main.analytics.events").scan().to_arrow()
    assert sorted(example.column("run_id").to_pylist()) == ["ex-1", "ex-1", "ex-2", "ex-2"]
    outcome = sorted(scenario.states[r] for r in ICEBERG_REPLACES)
    assert outcome == ["failed", "success"], scenario.states
    winner = next(r for r in ICEBERG_REPLACES if scenario.states[r] == "success")
    loser = next(r for r in ICEBERG_REPLACES if scenario.states[r] == "failed")
    merge = deployment.tasks(ICEBERG, loser)["run.merge"]
    assert merge["state"] == "failed" and merge["try_number"] == 1
    log = deployment.task_log(ICEBERG, loser, "run.merge", 1)
    assert "iceberg table 'iceberg/replaces/': ConflictingDataFiles" in log, log[-3000:]
    replaced = catalog.load_table("main.iceberg.replaces").scan().to_arrow().column("run")
    assert replaced.to_pylist() == [winner]


def _failure(deployment: Deployment, dag: str, run_id: str) -> str:
    """What went wrong in a run: its tasks' states and the log of its first failed task."""
    tasks = deployment.tasks(dag, run_id)
    failed = [t for t, info in tasks.items() if info.get("state") == "failed"]
    log = deployment.task_log(dag, run_id, failed[0], 1)[-4000:] if failed else ""
    return f"{dag} {run_id}: {tasks}\n{log}"


def test_orchestrator_and_main_agree(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    """Every successful run published once, nothing else did; asset events name exactly the
    merges; no asset was created on the fly."""
    repo = lake.repository("e2e")
    published = _publications(repo)
    succeeded = {
        identity(RUNS, r) for r in [*CONCURRENT, *CONFLICTING] if scenario.states[r] == "success"
    }
    succeeded |= {
        identity(DELTA, r) for r in [*DELTA_APPENDS, *DELTA_RACE] if scenario.states[r] == "success"
    }
    succeeded |= {identity(d, r) for d, r in ICEBERG_RUNS if scenario.states[r] == "success"}
    assert set(published) == succeeded and all(len(c) == 1 for c in published.values())
    events = deployment.asset_events("graveler://e2e/main/tables/events")
    concurrent = {scenario.merges[r] for r in CONCURRENT}
    assert {e["extra"]["commit_id"] for e in events} == concurrent
    first = [e for e in events if not e["extra"]["replayed"]]
    assert sorted(e["extra"]["commit_id"] for e in first) == sorted(concurrent)
    replays = sorted(e["extra"]["run"] for e in events if e["extra"]["replayed"])
    assert replays == sorted(identity(RUNS, r) for r in ("r-concurrent-1", "r-concurrent-3"))
    declared = deployment.asset_events("graveler://e2e/main/tables/declared")
    assert {e["extra"]["commit_id"] for e in declared if e["extra"]["changes"]} == concurrent
    assert deployment.asset("graveler://e2e/main/tables/undeclared") is None
    # Those events scheduled the downstream DAG, and its runs succeed.
    deployment.wait(lambda: bool(deployment.dag_runs("e2e_downstream")), "a downstream run", 120)
    deployment.wait(
        lambda: all(
            r["state"] in ("success", "failed") for r in deployment.dag_runs("e2e_downstream")
        ),
        "the downstream runs to finish",
        300,
    )
    assert {r["state"] for r in deployment.dag_runs("e2e_downstream")} == {"success"}
    report = fsck(repo, verify_objects=True)
    assert report.clean, report.problems


def test_the_example_etl_dag_merges_its_clean_data(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    import io

    import pyarrow.parquet as pq

    repo = lake.repository("weather")
    assert scenario.states["etl-good"] == "success", deployment.tasks(ETL, "etl-good")
    assert _publications(repo) == {identity(ETL, "etl-good"): [repo.branch("main").commit_id]}
    rows = [
        r
        for e in repo.iter_objects("main", "clean/weather/")
        if not e.path.rsplit("/", 1)[-1].startswith("_")  # the table marker of an overwrite
        for r in pq.read_table(io.BytesIO(repo.get("main", e.path))).to_pylist()
    ]
    assert sorted(r["city"] for r in rows) == ["Lisbon", "Oslo"]
    assert {r["city"]: r["temp_f"] for r in rows}["Lisbon"] == 70.7
    assert repo.get("main", "raw/weather.csv").decode() == GOOD
    assert sorted(b.name for b in repo.list_branches()) == sorted(["main", ETL_BAD_BRANCH])
    report = fsck(repo, verify_objects=True)
    assert report.clean, report.problems


ETL_BAD_BRANCH = run_branch_name(ETL, "etl-bad", group="run")


def test_the_example_etl_dag_keeps_bad_data_off_main(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    repo = lake.repository("weather")
    assert scenario.states["etl-bad"] == "failed"
    tasks = deployment.tasks(ETL, "etl-bad")
    assert tasks["run.validate"]["state"] == "failed", tasks
    assert tasks["run.merge"]["state"] != "success", tasks
    assert identity(ETL, "etl-bad") not in _publications(repo)
    assert repo.get("main", "raw/weather.csv").decode() == GOOD  # main never saw it
    assert repo.get(ETL_BAD_BRANCH, "raw/weather.csv").decode() == BAD  # kept to inspect


def test_every_operator_runs_and_records_its_task(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    repo = lake.repository("ops")
    assert scenario.states["o-1"] == "success", deployment.tasks("e2e_operators", "o-1")
    committed = repo.get_commit(deployment.xcom("e2e_operators", "o-1", "commit"))
    merged = repo.get_commit(deployment.xcom("e2e_operators", "o-1", "merge"))
    reverted = repo.branch("main").commit_id
    for commit, task_id in ((committed, "commit"), (merged, "merge")):
        meta = commit.metadata
        assert meta[lineage.DAG_ID] == "e2e_operators" and meta[lineage.RUN_ID] == "o-1"
        assert meta[lineage.TASK_ID] == task_id and meta[lineage.TRY_NUMBER] == "1"
        assert "o-1" in meta[lineage.URL], meta
    assert committed.metadata["source"] == "e2e" and committed.message == "load o-1"
    assert merged.parents[1] == committed.id  # a merge commit, even where a fast-forward fits
    assert repo.resolve("release-o-1").commit.id == merged.id
    assert repo.get_commit(reverted).metadata[".graveler.revert.commit"] == merged.id
    assert not repo.exists("main", "tables/t/data.csv")  # the revert undid the merge
    assert repo.get(merged.id, "tables/t/data.csv") == b"id\n1\n"
    assert [b.name for b in repo.list_branches()] == ["main"]  # the delete operator ran


def test_an_asset_watcher_in_the_triggerer_schedules_on_a_commit(
    scenario: Scenario, deployment: Deployment
) -> None:
    events = deployment.asset_events(WATCHED)
    assert events, scenario.watched
    extra = events[0]["extra"]  # Airflow records the trigger's payload under "payload"
    assert extra["from_trigger"] is True
    payload = extra["payload"]
    assert payload["commit_id"] in scenario.watched and payload["path"].startswith("watched/")
    deployment.wait(lambda: bool(deployment.dag_runs("e2e_watcher")), "the watcher's DAG run", 120)
    deployment.wait(
        lambda: all(r["state"] == "success" for r in deployment.dag_runs("e2e_watcher")),
        "the watcher's DAG runs to succeed",
        300,
    )


def test_concurrent_delta_appends_both_land_exactly_once(
    scenario: Scenario, deployment: Deployment, lake: Graveler, tmp_path: Path
) -> None:
    repo = lake.repository("e2e")
    published = _publications(repo)
    for run_id in DELTA_APPENDS:
        assert scenario.states[run_id] == "success", (run_id, deployment.tasks(DELTA, run_id))
        assert len(published[identity(DELTA, run_id)]) == 1, run_id
    rows = [r for r in _delta_rows(repo, tmp_path / "table") if r != [20, "a"]]  # the race's
    assert rows == [[1, "a"], [11, "a"], [12, "a"], [2, "b"]]


def test_an_overwrite_after_a_concurrent_append_fails_as_delta_decides(
    scenario: Scenario, deployment: Deployment, lake: Graveler, tmp_path: Path
) -> None:
    repo = lake.repository("e2e")
    appended, overwrote = DELTA_RACE
    assert scenario.states[appended] == "success"
    assert scenario.states[overwrote] == "failed"
    merge = deployment.tasks(DELTA, overwrote)["run.merge"]
    assert merge["state"] == "failed" and merge["try_number"] == 1  # not retried
    log = deployment.task_log(DELTA, overwrote, "run.merge", 1)
    assert "Merge conflict publishing run" in log and DELTA_TABLE in log
    assert f"delta table {DELTA_TABLE!r}: ConcurrentAppend" in log
    assert identity(DELTA, overwrote) not in _publications(repo)
    assert [20, "a"] in _delta_rows(repo, tmp_path / "table")
