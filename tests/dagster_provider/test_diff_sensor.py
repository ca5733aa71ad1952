"""Acceptance: the diff sensor requests exactly one run per new commit touching its prefix and
none for commits elsewhere; its cursor is the last commit seen. Evaluated as the daemon does
(``evaluate_tick`` on a real instance, cursor carried from tick to tick)."""

from typing import Any

import dagster as dg
from graveler_dagster import build_graveler_diff_sensor, graveler_definitions

from graveler.repository import Repository


@dg.op
def noop() -> None:
    pass


@dg.job
def ingest() -> None:
    noop()


class Ticker:
    """Evaluates a sensor tick after tick, carrying the cursor like the sensor daemon."""

    def __init__(self, sensor: dg.SensorDefinition, instance: Any, resource: Any) -> None:
        self.sensor, self.instance, self.resource = sensor, instance, resource
        self.cursor: str | None = None

    def tick(self) -> list[dg.RunRequest]:
        with dg.build_sensor_context(
            instance=self.instance, cursor=self.cursor, resources={"graveler": self.resource}
        ) as ctx:
            data = self.sensor.evaluate_tick(ctx)
        self.cursor = data.cursor
        return list(data.run_requests or [])


def commit(repo: Repository, branch: str, path: str, data: bytes | None = b"x") -> str:
    if data is None:
        repo.delete(branch, path)
    else:
        repo.put(branch, path, data)
    return repo.commit(branch, f"change {path}").id


def test_one_run_per_new_commit_touching_the_prefix(
    resource: Any, instance: dg.DagsterInstance, observer: Any
) -> None:
    repo = observer()
    sensor = build_graveler_diff_sensor("lake", "main", "raw/", ingest)
    ticker = Ticker(sensor, instance, resource)
    try:
        assert ticker.tick() == []  # first tick records the head
        assert ticker.cursor == repo.resolve("main").commit.id

        c1 = commit(repo, "main", "raw/orders.csv")
        commit(repo, "main", "reports/q1.csv")  # elsewhere: no run
        c3 = commit(repo, "main", "raw/orders.csv", None)  # a removal touches the prefix too
        requests = ticker.tick()
        assert [r.run_key for r in requests] == [c1, c3]
        assert requests[0].tags["graveler/commit"] == c1
        assert requests[0].tags["graveler/ref"] == "main"
        assert ticker.cursor == c3
        assert ticker.tick() == []  # nothing new

        commit(repo, "main", "rawish/not-under-prefix.csv")
        assert ticker.tick() == []

        repo.create_branch("feature", "main")
        commit(repo, "feature", "raw/a.csv")
        commit(repo, "feature", "raw/b.csv")
        commit(repo, "main", "reports/q2.csv")
        merged = repo.merge("feature", "main").commit.id  # a merge commit: one change, one run
        assert [r.run_key for r in ticker.tick()] == [merged]
    finally:
        resource.close()


def test_rewritten_history_counts_as_one_change(
    resource: Any, instance: dg.DagsterInstance, observer: Any
) -> None:
    repo = observer()
    start = repo.resolve("main").commit.id
    repo.create_branch("dev", "main")
    ticker = Ticker(build_graveler_diff_sensor("lake", "dev", "raw/", ingest), instance, resource)
    try:
        ticker.tick()
        commit(repo, "dev", "raw/a.csv")
        commit(repo, "dev", "raw/b.csv")
        ticker.tick()
        repo.delete_branch("dev")
        repo.create_branch("dev", start)  # dev no longer contains the commits the cursor saw
        requests = ticker.tick()
        assert [r.run_key for r in requests] == [start]
        assert ticker.cursor == start
    finally:
        resource.close()


def test_sensor_names_are_valid_and_distinct() -> None:
    a = build_graveler_diff_sensor("lake", "main", "raw/", ingest)
    b = build_graveler_diff_sensor("lake", "main", "reports/2024", ingest)
    assert a.name == "graveler_diff_lake_main_raw"
    assert b.name == "graveler_diff_lake_main_reports_2024"
    assert a.job_name == "ingest"


def test_sensor_intervals_can_be_set_and_every_sensor_starts_running(resource: Any) -> None:
    """The merge and failure sensors take ``sensor_interval_seconds``, watch every code
    location (runs launched without one are published too) and, like the diff sensor, start
    RUNNING."""
    diff = build_graveler_diff_sensor("lake", "main", "raw/", ingest, minimum_interval_seconds=9)
    pieces = graveler_definitions(resource, sensor_interval_seconds=7, extra_sensors=[diff])
    merge, failure, watched = pieces["sensors"]
    assert [s.minimum_interval_seconds for s in (merge, failure, watched)] == [7, 7, 9]
    assert {s.default_status for s in pieces["sensors"]} == {dg.DefaultSensorStatus.RUNNING}
    assert merge._monitor_all_code_locations and failure._monitor_all_code_locations  # type: ignore[attr-defined]
    quiet = graveler_definitions(resource, sensor_status=dg.DefaultSensorStatus.STOPPED)
    assert {s.default_status for s in quiet["sensors"]} == {dg.DefaultSensorStatus.STOPPED}
