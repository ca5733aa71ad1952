"""Triggers and sensors in this process: serialization round trips, firing on commits made by
another process, error events, the asset-watcher trigger, one shared client per process, and
``ObjectStoragePath`` on a graveler connection. (A sensor deferred to the real triggerer is
in ``test_e2e.py``.)"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from graveler_airflow.triggers.events import GravelerCommitEventTrigger
from graveler_airflow.triggers.graveler import (
    GravelerCommitTrigger,
    GravelerDiffTrigger,
    GravelerObjectTrigger,
)

from graveler.client import Graveler
from graveler.repository import Repository

ROOT = Path(__file__).resolve().parents[2]
CONN_ID = "graveler_trigger_test"


@pytest.fixture
def refs(tmp_path: Path) -> dict[str, str]:
    return {"database_url": f"sqlite:///{tmp_path / 'refs.db'}", "home": str(tmp_path / "home")}


@pytest.fixture
def conn(monkeypatch: pytest.MonkeyPatch, refs: dict[str, str]) -> str:
    """A connection (from the environment, as Airflow's secrets backend reads it)."""
    doc = {"conn_type": "graveler", "extra": refs}
    monkeypatch.setenv(f"AIRFLOW_CONN_{CONN_ID.upper()}", json.dumps(doc))
    return CONN_ID


@pytest.fixture
def lake(refs: dict[str, str]) -> Any:
    with Graveler(home=refs["home"], database_url=refs["database_url"]) as gv:
        yield gv.create_repository("lake")


def _commit_elsewhere(refs: dict[str, str], branch: str, path: str) -> str:
    """Stage and commit on ``branch`` of ``lake`` from another process; returns the commit ID."""
    script = textwrap.dedent(
        f"""
        from graveler.client import Graveler
        with Graveler(home={refs["home"]!r}, database_url={refs["database_url"]!r}) as gv:
            repo = gv.repository("lake")
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


async def _events(trigger: Any, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
    async def collect() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        async for event in trigger.run():
            found.append(dict(event.payload))
            if len(found) == count:
                return found
        raise AssertionError("the trigger ended early")

    return await asyncio.wait_for(collect(), timeout)


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
        GravelerObjectTrigger(repository="lake", branch="main", path="raw/a.csv"),
        GravelerCommitEventTrigger(repository="lake", branch="main", prefix="t/"),
    ]
    for trigger in triggers:
        classpath, kwargs = trigger.serialize()
        stored = json.loads(json.dumps(serialize(kwargs)))  # what the triggerer gets back
        rebuilt = import_string(classpath)(**deserialize(stored))
        assert type(rebuilt) is type(trigger)
        assert rebuilt.serialize() == (classpath, kwargs)


def test_commit_and_object_triggers_fire_on_a_commit_made_by_another_process(
    conn: str, refs: dict[str, str], lake: Repository
) -> None:
    lake.create_branch("incoming", "main")
    before = lake.branch("incoming").commit_id
    common = {"repository": "lake", "graveler_conn_id": conn, "poll_interval": 0.05}
    commit = GravelerCommitTrigger(branch="incoming", prev_commit_id=before, **common)
    found = GravelerObjectTrigger(branch="incoming", path="incoming/", **common)

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
        waiting = [asyncio.create_task(_events(t, 1)) for t in (commit, found)]
        await asyncio.sleep(0.3)
        assert not any(w.done() for w in waiting)  # nothing to see yet
        commit_id = await asyncio.to_thread(_commit_elsewhere, refs, "incoming", "incoming/a.csv")
        return await waiting[0], await waiting[1], commit_id

    [event], [object_event], commit_id = asyncio.run(scenario())
    assert event == {
        "status": "success",
        "repository": "lake",
        "branch": "incoming",
        "commit_id": commit_id,
        "previous_commit_id": before,
    }
    assert object_event["path"] == "incoming/a.csv" and object_event["commit_id"] == commit_id


def test_diff_trigger_fires_only_for_changes_under_its_prefix(
    conn: str, refs: dict[str, str], lake: Repository
) -> None:
    lake.create_branch("incoming", "main")
    lake.put("incoming", "other/x.csv", b"x")
    lake.commit("incoming", "outside the prefix")
    trigger = GravelerDiffTrigger(
        repository="lake",
        branch="incoming",
        ref="main",
        prefix="raw/",
        graveler_conn_id=conn,
        poll_interval=0.05,
    )

    async def scenario() -> tuple[dict[str, Any], str]:
        waiting = asyncio.create_task(_events(trigger, 1))
        await asyncio.sleep(0.3)
        assert not waiting.done()
        commit_id = await asyncio.to_thread(_commit_elsewhere, refs, "incoming", "raw/a.csv")
        return (await waiting)[0], commit_id

    event, commit_id = asyncio.run(scenario())
    assert event["commit_id"] == commit_id and event["path"] == "raw/a.csv"
    assert event["ref_commit_id"] == lake.resolve("main").commit.id


def test_trigger_reports_graveler_errors_as_events(conn: str) -> None:
    trigger = GravelerCommitTrigger(
        repository="no-such-repo", branch="main", prev_commit_id=None, graveler_conn_id=conn
    )
    [event] = asyncio.run(_events(trigger, 1))
    assert event["status"] == "error" and "RepositoryNotFound" in event["message"]


class _StateStore:
    """What the triggerer injects into an asset watcher's trigger (one watched asset)."""

    def __init__(self, stored: dict[str, Any]) -> None:
        self.stored = stored

    async def aget(self, key: str, default: Any = None) -> Any:
        return self.stored.get(key, default)

    async def aset(self, key: str, value: Any) -> None:
        self.stored[key] = value


def test_event_trigger_fires_once_per_new_head_under_its_prefix(
    conn: str, refs: dict[str, str], lake: Repository
) -> None:
    start = lake.branch("main").commit_id
    stored: dict[str, Any] = {}
    trigger = GravelerCommitEventTrigger(
        repository="lake", branch="main", prefix="t/", graveler_conn_id=conn, poll_interval=0.05
    )
    trigger.asset_state_store = _StateStore(stored)

    async def scenario() -> tuple[list[dict[str, Any]], list[str]]:
        waiting = asyncio.create_task(_events(trigger, 2))
        while trigger.state_key not in stored:  # the trigger took its baseline
            await asyncio.sleep(0.05)
        assert stored[trigger.state_key] == start
        made = [await asyncio.to_thread(_commit_elsewhere, refs, "main", "elsewhere/x")]
        await _until(lambda: stored.get(trigger.state_key) == made[0])  # baseline moved
        made.append(await asyncio.to_thread(_commit_elsewhere, refs, "main", "t/a.csv"))
        await _until(lambda: stored.get(trigger.state_key) == made[1])  # its event was taken
        made.append(await asyncio.to_thread(_commit_elsewhere, refs, "main", "t/b.csv"))
        return await waiting, made

    events, made = asyncio.run(scenario())
    assert [(e["commit_id"], e["previous_commit_id"], e["path"]) for e in events] == [
        (made[1], made[0], "t/a.csv"),  # the commit outside t/ moved the baseline only
        (made[2], made[1], "t/b.csv"),
    ]
    # A head is recorded once the triggerer took its event and asks for the next one: the
    # last event here was never followed by that, so a restart would deliver it again.
    assert stored == {trigger.state_key: made[1]}
    restarted = GravelerCommitEventTrigger(**trigger.serialize()[1])
    restarted.asset_state_store = _StateStore(stored)
    assert asyncio.run(restarted._load()) == made[1]  # a restart carries on from there
    assert start not in made


async def _until(condition: Callable[[], bool], timeout: float = 60) -> None:
    """Poll ``condition`` until it holds; fail (never hang) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the trigger did not get there in time")
        await asyncio.sleep(0.05)


def test_sensors_and_triggers_share_one_client_per_process(
    conn: str, refs: dict[str, str], lake: Repository
) -> None:
    lake.put("main", "x", b"x")
    lake.commit("main", "x for the sensors and triggers")
    script = textwrap.dedent(
        f"""
        import asyncio
        from graveler_airflow import GravelerCommitSensor, GravelerObjectSensor
        from graveler.client import shared_clients
        from graveler_airflow.triggers.graveler import GravelerObjectTrigger

        sensors = [GravelerObjectSensor(task_id=f"s{{i}}", repository="lake", path="x",
                                        graveler_conn_id={conn!r}) for i in range(5)]
        sensors.append(GravelerCommitSensor(task_id="c", repository="lake", branch="main",
                                            graveler_conn_id={conn!r}))
        for s in sensors:
            s.poke({{}})
            s.poke({{}})

        async def wait_all():
            triggers = [GravelerObjectTrigger(repository="lake", branch="main", path="x",
                                              graveler_conn_id={conn!r}, poll_interval=0.05)
                        for _ in range(20)]
            # x exists: every trigger completes one poll (and so opens its client) and fires
            await asyncio.wait_for(asyncio.gather(*(anext(t.run()) for t in triggers)), 120)

        asyncio.run(wait_all())
        print(shared_clients())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'providers'}"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "1"


def test_object_storage_path_uses_the_connection(
    conn: str,
    refs: dict[str, str],
    lake: Repository,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ObjectStoragePath resolves graveler:// through the provider's filesystems entry, on
    the connection's refs database, and leaves no ./.graveler behind."""
    from airflow.sdk import ObjectStoragePath

    lake.put("main", "data/a.csv", b"a,b\n1,2\n")
    lake.commit("main", "data")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    path = ObjectStoragePath("graveler://lake/main/data/a.csv", conn_id=conn)
    assert path.read_text() == "a,b\n1,2\n"
    (ObjectStoragePath("graveler://lake/main/", conn_id=conn) / "data/b.csv").write_text("x\n")
    assert lake.get("main", "data/b.csv") == b"x\n"  # staged on main through the connection
    assert sorted(
        p.name for p in ObjectStoragePath("graveler://lake/main/data", conn_id=conn).iterdir()
    ) == ["a.csv", "b.csv"]
    assert not (cwd / ".graveler").exists()
