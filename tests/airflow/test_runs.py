"""Real DAG runs (Airflow 3, SQLite metadata database, graveler refs in that database): the
run branch, concurrent runs, the operators and the asset events of merges."""

from __future__ import annotations

import pytest
from graveler_airflow import lineage

from graveler.client import Graveler
from graveler.errors import MergeConflict
from graveler.repository import Repository
from tests.airflow.harness import Workers, asset_activity

RUN_DAG = "graveler_test_run"


def _conf(repo: Repository, **extra: object) -> dict[str, object]:
    return {"repository": repo.name, "fail_validation": False, "writes": {}, **extra}


def _other_branches(repo: Repository) -> list[str]:
    return [b.name for b in repo.list_branches() if b.name != "main"]


def test_successful_run_merges_into_main_with_run_metadata(
    workers: Workers, lake: Repository
) -> None:
    before = lake.resolve("main").commit.id
    writes = {"raw/events.csv": "id,kind\n1,click\n", "clean/events.csv": "id\n1\n"}
    result = workers.run(RUN_DAG, _conf(lake, writes=writes))

    assert result["state"] == "success", result
    head = lake.resolve("main").commit
    assert result["xcoms"]["run.merge:return_value"] == head.id
    assert len(head.parents) == 2 and head.parents[0] == before  # one merge commit on main
    assert lake.get_commit(head.parents[1]).parents == (before,)  # the run's commit
    assert head.metadata[lineage.DAG_ID] == RUN_DAG
    assert head.metadata[lineage.RUN_ID] == result["run_id"]
    assert head.metadata[lineage.TASK_ID] == "run.merge"
    assert head.metadata[lineage.URL].endswith("/tasks/run.merge?try_number=1")
    assert {p: lake.get("main", p).decode() for p in writes} == writes
    assert _other_branches(lake) == []  # merged run branches are deleted
    branch = result["xcoms"]["run.create_branch:return_value"]
    assert result["xcoms"]["run.branch_from_template:return_value"] == branch


def test_failed_validation_leaves_main_untouched_and_keeps_the_branch(
    workers: Workers, lake: Repository
) -> None:
    lake.put("main", "raw/events.csv", b"old\n")
    before = lake.commit("main", "existing data").id
    writes = {"raw/events.csv": "new\n", "clean/events.csv": "bad\n"}
    result = workers.run(RUN_DAG, _conf(lake, writes=writes, fail_validation=True))

    assert result["state"] == "failed"
    assert result["tasks"]["run.validate"] == "failed"
    assert result["tasks"]["run.merge"] == "upstream_failed"
    assert lake.resolve("main").commit.id == before
    assert lake.get("main", "raw/events.csv") == b"old\n"
    [kept] = _other_branches(lake)
    assert kept == result["xcoms"]["run.create_branch:return_value"]
    assert lake.branch(kept).commit_id == before
    assert {p: lake.get(kept, p).decode() for p in writes} == writes  # inspectable


def test_delete_on_failure_discards_the_branch(workers: Workers, lake: Repository) -> None:
    before = lake.resolve("main").commit.id
    result = workers.run("graveler_test_discard", {"repository": lake.name})

    assert result["state"] == "failed"
    assert result["tasks"]["run.discard"] == "success"
    assert lake.resolve("main").commit.id == before
    assert _other_branches(lake) == []


def test_concurrent_runs_with_disjoint_writes_both_merge(
    workers: Workers, lake: Repository
) -> None:
    base = lake.resolve("main").commit.id
    first = workers.start_run(
        RUN_DAG, _conf(lake, writes={"a/part-0.csv": "a\n"}, await_branches=2), worker=0
    )
    second = workers.start_run(
        RUN_DAG, _conf(lake, writes={"b/part-0.csv": "b\n"}, await_main_moved=True), worker=1
    )
    one, two = first.result(timeout=600), second.result(timeout=600)

    assert (one["state"], two["state"]) == ("success", "success"), (one, two)
    assert one["xcoms"]["run.create_branch:base_commit_id"] == base
    assert two["xcoms"]["run.create_branch:base_commit_id"] == base  # both forked from base
    assert lake.get("main", "a/part-0.csv") == b"a\n"
    assert lake.get("main", "b/part-0.csv") == b"b\n"
    log = [c.id for c in lake.log("main", amount=2, first_parent=True)]
    merges = [two["xcoms"]["run.merge:return_value"], one["xcoms"]["run.merge:return_value"]]
    assert log == merges


def test_concurrent_runs_writing_one_path_differently_conflict(
    workers: Workers, lake: Repository
) -> None:
    first = workers.start_run(
        RUN_DAG, _conf(lake, writes={"shared.csv": "first\n"}, await_branches=2), worker=0
    )
    second = workers.start_run(
        RUN_DAG, _conf(lake, writes={"shared.csv": "second\n"}, await_main_moved=True), worker=1
    )
    one, two = first.result(timeout=600), second.result(timeout=600)

    assert one["state"] == "success", one
    assert two["state"] == "failed" and two["tasks"]["run.merge"] == "failed", two
    head = lake.resolve("main").commit
    assert head.id == one["xcoms"]["run.merge:return_value"]
    assert lake.get("main", "shared.csv") == b"first\n"
    kept = two["xcoms"]["run.create_branch:return_value"]
    assert _other_branches(lake) == [kept]
    assert lake.get(kept, "shared.csv") == b"second\n"  # committed and kept
    assert list(lake.diff_uncommitted(kept)) == []
    with pytest.raises(MergeConflict) as conflict:  # what made the run's merge task fail
        lake.merge(kept, "main")
    assert conflict.value.keys == ["shared.csv"]
    assert lake.resolve("main").commit.id == head.id
    assert lake.get_commit(lake.branch(kept).commit_id).metadata[lineage.TASK_ID] == "run.merge"


def test_merge_emits_asset_events_that_schedule_the_downstream_dag(
    workers: Workers, client: Graveler
) -> None:
    repo = client.create_repository("lake-assets")
    writes = {"tables/daily/part-0.csv": "d\n", "tables/daily/part-1.csv": "e\n"}
    result = workers.run(RUN_DAG, _conf(repo, writes=writes))
    assert result["state"] == "success", result

    merged = result["xcoms"]["run.merge:return_value"]
    activity = workers.call(asset_activity, "graveler://lake-assets/main/tables/daily")
    [event] = activity["events"]
    assert event["commit_id"] == merged and event["changes"] == 2
    assert event["path"] == "tables/daily" and event["branch"] == "main"
    assert activity["queued"] == ["graveler_test_downstream"]
    root = workers.call(asset_activity, "graveler://lake-assets/main")
    assert [e["commit_id"] for e in root["events"]] == [merged]


def test_operators_create_commit_merge_tag_revert_delete(
    workers: Workers, lake: Repository
) -> None:
    lake.put("main", "shared.csv", b"from main\n")
    lake.commit("main", "seed")
    result = workers.run("graveler_test_operators", {"repository": lake.name})
    assert result["state"] == "success", result

    x = {k.split(":")[0]: v for k, v in result["xcoms"].items() if k.endswith(":return_value")}
    commit = lake.get_commit(x["commit"])
    assert commit.message == f"ops run {result['run_id']}"
    assert commit.metadata["source"] == "graveler_test_operators"
    assert commit.metadata[lineage.TASK_ID] == "commit"
    merge = lake.get_commit(x["merge"])
    assert merge.parents[1] == commit.id
    assert merge.metadata[".graveler.merge.strategy"] == "source-wins"
    assert merge.metadata[lineage.TASK_ID] == "merge"
    assert {t.name: t.commit_id for t in lake.list_tags()} == {"release-1": merge.id}
    assert x["tag"] == merge.id
    head = lake.resolve("main").commit
    assert head.id == x["revert"] and head.parents == (merge.id,)
    assert lake.get("main", "shared.csv") == b"from main\n"  # the merge was reverted
    assert lake.get("release-1", "ops/a.csv") == b"a\n"
    assert _other_branches(lake) == []
