"""End to end under the real Dagster: a code server, the webserver and the daemon on PostgreSQL
storage (``deployment/harness.py``), runs launched through GraphQL and the ``dagster`` CLI.

Scenarios (``deployment/defs.py``): three concurrent runs, a failure and its re-execution from
failure, a diff sensor reacting to two commits made back to back, a CLI run merged by the
daemon's sensor, a downstream run launched right after its upstream succeeded while the
merge sensor is stopped, and Iceberg tables: two concurrent runs appending to one (both
land), two concurrent runs replacing one (one is refused by Iceberg's rules). After each,
:func:`assert_agreement` checks that every successful run is merged into ``main`` exactly
once and tagged with that merge (or, refused, is not merged and tagged so), no failed run
is, no run branch is left over, Dagster's latest materialization of every asset
(partition) names what ``main`` holds (for an Iceberg table: a snapshot in main's table),
and fsck finds the repository clean.
"""

from __future__ import annotations

import io
import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
import pytest
from graveler_dagster.lineage import latest, recorded

from graveler import Graveler
from graveler.maintenance.fsck import fsck
from graveler.tables.iceberg import GravelerCatalog
from graveler.versioning import runs
from tests.dagster_provider.deployment.harness import Deployment, deploy, teardown, wait_for
from tests.tables.delta import ops
from tests.tables.delta.workdir import checkout, publish

pytestmark = pytest.mark.postgres

MERGE_SENSOR = "graveler_merge_on_success"
DELTA_TABLE = "tables/delta_events/"
#: Assets that write without the IO manager (a Delta table is a prefix its materialization
#: names no single object of; the Delta test checks the table's rows on main instead).
NOT_BY_IO_MANAGER = {dg.AssetKey(["incoming", "feed"]), dg.AssetKey("delta_events")}
DIFF_SENSOR = "graveler_diff_lake_main_incoming"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    url = os.environ.get("GRAVELER_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("GRAVELER_TEST_POSTGRES_URL is not set (make test sets it)")
    dep = deploy(tmp_path_factory.mktemp("dagster-deployment"), url)
    yield dep
    teardown(dep)


@pytest.fixture(scope="module")
def lake(deployment: Deployment) -> Iterator[Any]:
    """The ``lake`` repository, seen from this process through graveler's own client."""
    info = deployment.admin_url.rsplit("/", 1)[0]
    gv = Graveler(home=deployment.workdir / "observer", database_url=f"{info}/{deployment.db}")
    namespace = (deployment.workdir / "lakehome" / "data" / "lake").as_uri()
    yield wait_for(lambda: _repository(gv, namespace), "the lake repository")
    gv.close()


def _repository(gv: Graveler, namespace: str) -> Any:
    try:
        return gv.repository("lake")
    except Exception:
        return gv.create_repository("lake", namespace)


def feed(version: int) -> bytes:
    return pd.DataFrame({"version": [version]}).to_parquet()


def test_concurrent_runs_failure_reexecution_and_diff_sensor(
    deployment: Deployment, lake: Any
) -> None:
    dep = deployment
    wait_for(
        lambda: dep.sensor(DIFF_SENSOR)["sensorState"]["ticks"], "the diff sensor's first tick"
    )
    (dep.workdir / "fail").touch()
    concurrent = [dep.launch("events_job", {"dagster/partition": p}) for p in "abc"]
    failing = dep.launch("etl")
    c1 = _commit_feed(lake, 1)
    c2 = _commit_feed(lake, 2)  # back to back: the sensor sees both in one tick

    finished = dep.wait_finished(*concurrent, failing)
    assert [r.status for r in finished] == [dg.DagsterRunStatus.SUCCESS] * 3 + [
        dg.DagsterRunStatus.FAILURE
    ]
    dep.wait_tag(failing, "graveler/merge", "kept")
    for run_id in concurrent:
        dep.wait_tag(run_id, "graveler/merge", "merged")
    # They overlapped: each waited in `events` until all three had started (deployment/defs.py).

    (dep.workdir / "fail").unlink()
    child = dep.reexecute_from_failure(failing)
    ingests = wait_for(lambda: _runs_of(dep, "ingest", 2), "two diff-sensor runs")
    dep.wait_finished(child, *ingests)
    dep.wait_tag(child, "graveler/merge", "merged")
    child_run = dep.run(child)
    assert child_run.parent_run_id == failing
    assert child_run.tags["graveler/branch"] == f"dagster-run-{child}"  # not the parent's
    assert f"dagster-run-{failing}" not in {b.name for b in lake.list_branches()}
    assert [e.path for e in lake.iter_objects("main", "checked")] == ["checked"]

    by_commit = {dep.run(r).tags["graveler/commit"]: r for r in ingests}
    assert set(by_commit) == {c1, c2}
    for commit, version in ((c1, 1), (c2, 2)):
        dep.wait_tag(by_commit[commit], "graveler/merge", "merged")
        read = _loaded_uri(dep, by_commit[commit], ["incoming", "feed"])
        assert read == f"graveler://lake/{commit}/incoming/feed"  # the triggering commit
        written = _materialized(dep, by_commit[commit], ["ingested"])
        assert pd.read_parquet(io.BytesIO(lake.get(*written)))["version"].tolist() == [version]
    assert_agreement(dep, lake)


def test_cli_run_and_downstream_right_after_upstream(deployment: Deployment, lake: Any) -> None:
    dep = deployment
    (dep.workdir / "prices").write_text("1")
    dep.cli_materialize("prices")  # no code-location origin: merged by the daemon's sensor
    cli_run = _runs_of(dep, "__ASSET_JOB", 1) or _runs_of(dep, "__ephemeral_asset_job__", 1)
    assert cli_run, "the CLI run is in the instance"
    dep.wait_tag(cli_run[0], "graveler/merge", "merged")

    dep.stop_sensor(MERGE_SENSOR)  # the downstream must not depend on the sensor's timing
    try:
        (dep.workdir / "prices").write_text("2")
        upstream = dep.launch("prices_job")
        dep.wait_finished(upstream)
        assert dep.run(upstream).tags.get("graveler/merge") == "pending"
        downstream = dep.launch("report_job")
        (done,) = dep.wait_finished(downstream)
        assert done.status == dg.DagsterRunStatus.SUCCESS, dep.logs()
    finally:
        dep.start_sensor(MERGE_SENSOR)
    dep.wait_tag(downstream, "graveler/merge", "merged")
    assert dep.run(upstream).tags["graveler/merge"] == "merged"  # published by the downstream
    upstream_uri = _materialized(dep, upstream, ["prices"])
    assert _loaded_uri(dep, downstream, ["prices"]) == "graveler://{}/{}/{}".format(
        "lake", *upstream_uri
    )
    report = pd.read_parquet(io.BytesIO(lake.get("main", "report")))
    assert report["version_read"].tolist() == [2]
    assert_agreement(dep, lake)


def _delta(mode: str, rows: list[list[Any]], group: str, after: str = "") -> dict[str, str]:
    tags = {"delta/mode": mode, "delta/rows": json.dumps(rows), "delta/group": group}
    return tags | ({"delta/after": after} if after else {})


def _delta_rows(lake: Any, work: Path) -> list[list[Any]]:
    return ops.rows(checkout(lake, "main", DELTA_TABLE, work))


def test_delta_runs_publish_as_delta_transactions(
    deployment: Deployment, lake: Any, tmp_path: Path
) -> None:
    """Two runs appending to one Delta table both land, exactly once; an overwrite that
    merges after a concurrent append fails as Delta decides, its failure naming the table
    (the merge sensor's skip reason), its branch kept."""
    dep = deployment
    ops.run(tmp_path / "table", {"op": "create", "rows": [[1, "a"], [2, "b"]]})
    publish(lake, "main", DELTA_TABLE, tmp_path / "table", "a Delta table")
    appends = [
        dep.launch("delta_job", _delta("append", [[10 + i, "a"]], "appends")) for i in (1, 2)
    ]
    race_append = dep.launch("delta_job", _delta("append", [[20, "a"]], "race"))
    overwrite = dep.launch("delta_job", _delta("overwrite", [[30, "a"]], "race", after=race_append))
    finished = dep.wait_finished(*appends, race_append, overwrite, timeout=300)
    assert [r.status for r in finished] == [dg.DagsterRunStatus.SUCCESS] * 4, dep.logs()
    for run_id in (*appends, race_append):
        dep.wait_tag(run_id, "graveler/merge", "merged")
    dep.wait_tag(overwrite, "graveler/merge", "failed")
    # the tag is set while the sensor evaluates; the daemon stores the tick's skip reason after
    reasons = wait_for(
        lambda: [r for r in dep.skip_reasons(MERGE_SENSOR) if overwrite in r],
        "the merge sensor's skip reason for the refused run",
    )
    assert f"delta table {DELTA_TABLE!r}" in reasons[0], reasons
    assert "ConcurrentAppend" in reasons[0]
    rows = _delta_rows(lake, tmp_path / "main")
    assert rows == [[1, "a"], [11, "a"], [12, "a"], [2, "b"], [20, "a"]]
    lake.delete_branch(f"dagster-run-{overwrite}")  # kept for inspection, as the tag says
    assert_agreement(dep, lake)


def test_iceberg_runs_append_together_and_replace_in_conflict(
    deployment: Deployment, lake: Any
) -> None:
    dep = deployment
    seeds = [dep.launch("appended_job"), dep.launch("replaced_job")]
    dep.wait_finished(*seeds)
    for run_id in seeds:
        dep.wait_tag(run_id, "graveler/merge", "merged")
    for name in ("appended", "replaced"):
        (dep.workdir / f"{name}-peers").write_text("2")
    appends = [dep.launch("appended_job") for _ in range(2)]
    replaces = [dep.launch("replaced_job") for _ in range(2)]
    finished = dep.wait_finished(*appends, *replaces)
    assert [r.status for r in finished] == [dg.DagsterRunStatus.SUCCESS] * 4, dep.logs()
    for run_id in appends:
        dep.wait_tag(run_id, "graveler/merge", "merged")
    outcomes = wait_for(lambda: _publications(dep, replaces), "both replacing runs published")
    assert sorted(outcomes.values()) == ["failed", "merged"]
    catalog = GravelerCatalog("e2e", lake)
    rows = catalog.load_table("main.dagster.appended").scan().to_arrow().column("run")
    assert sorted(rows.to_pylist()) == sorted([seeds[0], *appends])  # all three landed
    winner = next(r for r, tag in outcomes.items() if tag == "merged")
    refused = next(r for r, tag in outcomes.items() if tag == "failed")
    replaced = catalog.load_table("main.dagster.replaced").scan().to_arrow().column("run")
    assert replaced.to_pylist() == [winner]
    lake.delete_branch(f"dagster-run-{refused}")  # kept for inspection; done inspecting
    assert_agreement(dep, lake)


def _publications(dep: Deployment, run_ids: list[str]) -> dict[str, str] | None:
    tags = {r: dep.run(r).tags.get("graveler/merge", "") for r in run_ids}
    return tags if all(t in ("merged", "failed") for t in tags.values()) else None


# --- agreement between Dagster and main ------------------------------------------------------


def assert_agreement(dep: Deployment, lake: Any) -> None:
    """See the module docstring."""
    instance = dep.instance
    assert instance is not None
    merged = Counter(
        c.metadata[runs.RUN_KEY]
        for c in lake.log("main", first_parent=True)
        if runs.RUN_KEY in c.metadata
    )
    heads = {c.metadata.get(runs.RUN_KEY): c.id for c in lake.log("main", first_parent=True)}
    for run in instance.get_runs():
        identity = f"dagster/{run.run_id}"
        if run.tags.get("graveler/merge") == "failed":  # refused, as the test that ran it saw
            assert merged[identity] == 0, (run.job_name, run.run_id)
        elif run.status == dg.DagsterRunStatus.SUCCESS:
            assert merged[identity] == 1, (run.job_name, run.run_id, merged[identity])
            assert run.tags["graveler/merge"] == "merged"
            assert run.tags["graveler/merge_commit"] == heads[identity]
        else:
            assert merged[identity] == 0, (run.job_name, run.run_id)
    assert [b.name for b in lake.list_branches()] == ["main"]
    head = lake.resolve("main").commit.id
    for key in instance.get_asset_keys():
        for partition in _partitions(key):
            if key in NOT_BY_IO_MANAGER:
                continue
            entry = latest(instance, key, partition)
            if entry is None:  # a key Dagster lists with no materialization: nothing to agree on
                continue
            rec = recorded(entry, partition)
            assert rec is not None, (key, partition)  # every materialization names a version
            if rec.path.endswith(ICEBERG_POINTER):  # main's table holds the version recorded
                assert _snapshot(lake, rec.commit, rec.path) in _snapshots(lake, head, rec.path)
                continue
            assert lake.get(rec.commit, rec.path) == lake.get(head, rec.path), (key, partition)
    report = fsck(lake)
    assert report.clean, report.problems


ICEBERG_POINTER = "/metadata/current.metadata.json"


def _snapshot(lake: Any, ref: str, pointer: str) -> int:
    return int(json.loads(lake.get(ref, pointer))["current-snapshot-id"])


def _snapshots(lake: Any, ref: str, pointer: str) -> set[int]:
    return {s["snapshot-id"] for s in json.loads(lake.get(ref, pointer))["snapshots"]}


def _partitions(key: dg.AssetKey) -> list[str | None]:
    return ["a", "b", "c"] if key == dg.AssetKey("events") else [None]


def _commit_feed(lake: Any, version: int) -> str:
    lake.put("main", "incoming/feed", feed(version), metadata={"dagster/format": "pandas"})
    return str(lake.commit("main", f"feed v{version}").id)


def _runs_of(dep: Deployment, job: str, count: int) -> list[str] | None:
    assert dep.instance is not None
    found = dep.instance.get_runs(filters=dg.RunsFilter(job_name=job))
    return [r.run_id for r in found] if len(found) >= count else None


def _events(dep: Deployment, run_id: str, kind: dg.DagsterEventType) -> list[Any]:
    assert dep.instance is not None
    return [
        r.event_log_entry for r in dep.instance.get_records_for_run(run_id, of_type=kind).records
    ]


def _loaded_uri(dep: Deployment, run_id: str, key: list[str]) -> str:
    """The commit-addressed URI run ``run_id`` recorded for its input ``key``."""
    for entry in _events(dep, run_id, dg.DagsterEventType.ASSET_OBSERVATION):
        observation = entry.asset_observation
        if observation.asset_key == dg.AssetKey(key):
            return str(observation.metadata["graveler/uri"].value)
    raise AssertionError(f"run {run_id} recorded no input {key}")


def _materialized(dep: Deployment, run_id: str, key: list[str]) -> tuple[str, str]:
    """(commit, path) of run ``run_id``'s materialization of ``key``."""
    for entry in _events(dep, run_id, dg.DagsterEventType.ASSET_MATERIALIZATION):
        if entry.asset_materialization.asset_key == dg.AssetKey(key):
            rec = recorded(entry, None)
            assert rec is not None
            return rec.commit, rec.path
    raise AssertionError(f"run {run_id} materialized no {key}")
