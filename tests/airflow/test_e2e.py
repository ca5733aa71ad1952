"""Runs publish exactly once under the real Airflow: the checks of what the end-to-end
scenario (:mod:`tests.airflow.e2e_scenario`) left in Airflow and in the lake, for run
branches, the example ETL DAG, operators, sensors and asset watchers. Its table runs (Delta
Lake and Iceberg) are checked in :mod:`tests.airflow.test_e2e_tables`.
"""

from __future__ import annotations

import pytest
from graveler_airflow import lineage
from graveler_airflow.naming import run_branch_name

from graveler.client import Graveler
from graveler.maintenance.fsck import fsck
from tests.airflow.deployment import Deployment
from tests.airflow.e2e_scenario import (
    BAD,
    CONCURRENT,
    CONFLICTING,
    DELTA,
    DELTA_APPENDS,
    DELTA_RACE,
    ETL,
    GOOD,
    ICEBERG_RUNS,
    RUNS,
    WATCHED,
    Scenario,
    identity,
    publications,
)

# The first test's setup starts Airflow and runs the whole scenario (minutes on a busy machine).
pytestmark = pytest.mark.timeout(1800)


def test_concurrent_runs_and_a_retried_one_each_publish_exactly_once(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    repo = lake.repository("e2e")
    published = publications(repo)
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
    assert identity(RUNS, loser) not in publications(repo)
    expected = "first\n" if winner == "r-conflict-1" else "second\n"
    assert repo.get("main", "tables/shared/data.csv") == expected.encode()
    # The branch was kept as the message said, until the prune operator removed it.
    assert any(loser in name for name in scenario.pruned), scenario.pruned


def test_a_failed_run_keeps_main_untouched(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    repo = lake.repository("e2e")
    published = publications(repo)
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
    published = publications(repo)
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


def test_orchestrator_and_main_agree(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    """Every successful run published once, nothing else did; asset events name exactly the
    merges; no asset was created on the fly."""
    repo = lake.repository("e2e")
    published = publications(repo)
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
    assert publications(repo) == {identity(ETL, "etl-good"): [repo.branch("main").commit_id]}
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
    assert identity(ETL, "etl-bad") not in publications(repo)
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
