"""Table runs under the real Airflow (the end-to-end scenario of
:mod:`tests.airflow.e2e_scenario`): two runs appending to one Delta table or one Iceberg
table both publish once; a change that the table format refuses beside a concurrent one
fails its merge once, not retried, with a message naming the table and the format's reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graveler.client import Graveler
from tests.airflow.deployment import Deployment
from tests.airflow.e2e_scenario import (
    DELTA,
    DELTA_APPENDS,
    DELTA_RACE,
    DELTA_TABLE,
    EXAMPLE_RUNS,
    ICEBERG,
    ICEBERG_APPENDS,
    ICEBERG_EXAMPLE,
    ICEBERG_REPLACES,
    Scenario,
    delta_rows,
    failure,
    identity,
    publications,
)

# The first test's setup starts Airflow and runs the whole scenario (minutes on a busy machine).
pytestmark = pytest.mark.timeout(1800)


def test_iceberg_runs_append_together_and_replace_in_conflict(
    scenario: Scenario, deployment: Deployment, lake: Graveler
) -> None:
    """Two runs appending to one Iceberg table at once both land (graveler replays the
    second's snapshot on the first's); two replacing one conflict by Iceberg's rules: one
    merges, the other's merge fails once, not retried, and main keeps the winner's table."""
    from graveler.tables.iceberg import GravelerCatalog

    repo = lake.repository("e2e")
    catalog = GravelerCatalog("e2e", repo)
    for dag, run_id in [(ICEBERG, r) for r in ICEBERG_APPENDS] + [
        (ICEBERG_EXAMPLE, r) for r in EXAMPLE_RUNS
    ]:
        assert scenario.states[run_id] == "success", failure(deployment, dag, run_id)
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


def test_concurrent_delta_appends_both_land_exactly_once(
    scenario: Scenario, deployment: Deployment, lake: Graveler, tmp_path: Path
) -> None:
    repo = lake.repository("e2e")
    published = publications(repo)
    for run_id in DELTA_APPENDS:
        assert scenario.states[run_id] == "success", (run_id, deployment.tasks(DELTA, run_id))
        assert len(published[identity(DELTA, run_id)]) == 1, run_id
    rows = [r for r in delta_rows(repo, tmp_path / "table") if r != [20, "a"]]  # the race's
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
    assert identity(DELTA, overwrote) not in publications(repo)
    assert [20, "a"] in delta_rows(repo, tmp_path / "table")
