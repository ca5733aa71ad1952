"""The deferrable sensors' triggers: serialization round trip, firing on commits made by other
processes, error events, and a real DAG run whose sensors defer."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from graveler_airflow.triggers.graveler import GravelerCommitTrigger, GravelerDiffTrigger

from graveler.repository import Repository
from tests.airflow.harness import ROOT, AirflowEnv, Workers, wait_for

CONN_ID = "graveler_trigger_test"


@pytest.fixture
def conn(monkeypatch: pytest.MonkeyPatch, airflow_env: AirflowEnv) -> str:
    """A connection (from the environment, as Airflow's secrets backend reads it) on the
    session's refs database."""
    extra = {"database_url": airflow_env.database_url, "home": str(airflow_env.graveler_home)}
    monkeypatch.setenv(
        f"AIRFLOW_CONN_{CONN_ID.upper()}", json.dumps({"conn_type": "graveler", "extra": extra})
    )
    return CONN_ID


def _commit_elsewhere(ae: AirflowEnv, repo: str, branch: str, path: str) -> str:
    """Stage and commit on ``branch`` from a separate Python process; returns the commit ID."""
    script = textwrap.dedent(
        f"""
        from graveler.client import Graveler
        with Graveler(home={str(ae.graveler_home)!r}, database_url={ae.database_url!r}) as gv:
            repo = gv.repository({repo!r})
            repo.put({branch!r}, {path!r}, b"written by another process")
            print(repo.commit({branch!r}, "from another process").id)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    return done.stdout.strip()


async def _first_event(trigger: Any, timeout: float = 60.0) -> dict[str, Any]:
    async def first() -> dict[str, Any]:
        async for event in trigger.run():
            return dict(event.payload)
        raise AssertionError("the trigger ended without an event")

    return await asyncio.wait_for(first(), timeout)


def test_triggers_round_trip_through_serialize() -> None:
    from airflow.sdk.module_loading import import_string
    from airflow.sdk.serde import deserialize, serialize

    triggers = [
        GravelerCommitTrigger(
            repository="lake",
            branch="etl",
            prev_commit_id="ab" * 32,
            graveler_conn_id="c",
            poll_interval=2,
        ),
        GravelerDiffTrigger(repository="lake", branch="etl", ref="main~1", prefix="raw/"),
    ]
    for trigger in triggers:
        classpath, kwargs = trigger.serialize()
        stored = json.loads(json.dumps(serialize(kwargs)))  # what the triggerer gets back
        rebuilt = import_string(classpath)(**deserialize(stored))
        assert type(rebuilt) is type(trigger)
        assert rebuilt.serialize() == (classpath, kwargs)


def test_commit_trigger_fires_on_a_commit_made_by_another_process(
    conn: str, airflow_env: AirflowEnv, lake: Repository
) -> None:
    lake.create_branch("incoming", "main")
    before = lake.branch("incoming").commit_id
    trigger = GravelerCommitTrigger(
        repository=lake.name,
        branch="incoming",
        prev_commit_id=before,
        graveler_conn_id=conn,
        poll_interval=0.05,
    )

    async def scenario() -> tuple[dict[str, Any], str]:
        waiting = asyncio.create_task(_first_event(trigger))
        await asyncio.sleep(0.3)
        assert not waiting.done()  # nothing to see yet
        commit_id = await asyncio.to_thread(
            _commit_elsewhere, airflow_env, lake.name, "incoming", "incoming/a.csv"
        )
        return await waiting, commit_id

    event, commit_id = asyncio.run(scenario())
    assert event == {
        "status": "success",
        "repository": lake.name,
        "branch": "incoming",
        "commit_id": commit_id,
        "previous_commit_id": before,
    }


def test_diff_trigger_fires_only_for_changes_under_its_prefix(
    conn: str, airflow_env: AirflowEnv, lake: Repository
) -> None:
    lake.create_branch("incoming", "main")
    lake.put("incoming", "other/x.csv", b"x")
    lake.commit("incoming", "outside the prefix")
    trigger = GravelerDiffTrigger(
        repository=lake.name,
        branch="incoming",
        ref="main",
        prefix="raw/",
        graveler_conn_id=conn,
        poll_interval=0.05,
    )

    async def scenario() -> tuple[dict[str, Any], str]:
        waiting = asyncio.create_task(_first_event(trigger))
        await asyncio.sleep(0.3)
        assert not waiting.done()
        commit_id = await asyncio.to_thread(
            _commit_elsewhere, airflow_env, lake.name, "incoming", "raw/a.csv"
        )
        return await waiting, commit_id

    event, commit_id = asyncio.run(scenario())
    assert event["commit_id"] == commit_id and event["path"] == "raw/a.csv"
    assert event["ref_commit_id"] == lake.resolve("main").commit.id


def test_trigger_reports_graveler_errors_as_events(conn: str) -> None:
    trigger = GravelerCommitTrigger(
        repository="no-such-repo", branch="main", prev_commit_id=None, graveler_conn_id=conn
    )
    event = asyncio.run(_first_event(trigger))
    assert event["status"] == "error" and "RepositoryNotFound" in event["message"]


def _graveler_triggers(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT count(*) FROM trigger WHERE classpath LIKE 'graveler_airflow.%'"
        ).fetchone()
    return int(row[0])


def test_deferred_sensors_resume_with_the_commit_id(
    workers: Workers, airflow_env: AirflowEnv, lake: Repository
) -> None:
    lake.create_branch("incoming", "main")
    before = lake.branch("incoming").commit_id
    triggers_before = _graveler_triggers(airflow_env.metadata_db)
    conf = {"repository": lake.name, "branch": "incoming", "prev_commit_id": before}
    running = workers.start_run("graveler_test_sensors", conf)

    wait_for(
        lambda: _graveler_triggers(airflow_env.metadata_db) > triggers_before,
        "the commit sensor to defer",
    )
    commit_id = _commit_elsewhere(airflow_env, lake.name, "incoming", "incoming/data.csv")
    result = running.result(timeout=300)

    assert result["state"] == "success", result
    assert result["xcoms"]["commit_sensor:return_value"] == commit_id
    assert result["xcoms"]["diff_sensor:return_value"] == commit_id


def test_commit_sensor_pokes_against_the_head_it_saw_first(conn: str, lake: Repository) -> None:
    from graveler_airflow import GravelerCommitSensor, GravelerDiffSensor

    from graveler.errors import InvalidArgument

    lake.create_branch("incoming", "main")
    sensor = GravelerCommitSensor(
        task_id="s",
        repository=lake.name,
        branch="incoming",
        prev_commit_id="",
        graveler_conn_id=conn,
    )
    assert not sensor.poke({})  # first look: the baseline ("" renders as unset)
    assert not sensor.poke({})
    lake.put("incoming", "raw/a.csv", b"a")
    commit_id = lake.commit("incoming", "new data").id
    assert sensor.poke({}).xcom_value == commit_id

    diff = GravelerDiffSensor(
        task_id="d", repository=lake.name, branch="incoming", prefix="raw/", graveler_conn_id=conn
    )
    assert diff.poke({}).xcom_value == commit_id
    diff.prefix = "clean/"
    assert not diff.poke({})

    rescheduled = GravelerCommitSensor(
        task_id="r",
        repository=lake.name,
        branch="incoming",
        mode="reschedule",
        graveler_conn_id=conn,
    )
    with pytest.raises(InvalidArgument, match="needs prev_commit_id"):
        rescheduled.poke({})
