"""Operators' ``run`` on a real repository, with a task context built here: the run-branch
publication (idempotent, conflicts), asset-event bookkeeping, single-object operators and
pruning. What needs the scheduler, triggerer and database of a real Airflow is in
``test_e2e.py``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.sdk import DAG, Asset
from airflow.sdk.exceptions import AirflowFailException, AirflowRuntimeError, ErrorType
from airflow.sdk.execution_time.comms import ErrorResponse
from airflow.sdk.execution_time.context import OutletEventAccessors
from graveler_airflow import GravelerRunBranch, graveler_asset
from graveler_airflow.operators.graveler import merge_with_lineage

from graveler import MergeOptions
from graveler.core.errors import (
    AlreadyExists,
    BranchNotFound,
    InvalidArgument,
    InvalidURI,
    NotFastForward,
)
from graveler.versioning import runs

CONTEXT = {
    "ti": SimpleNamespace(dag_id="d", run_id="r", task_id="t", try_number=1, log_url="http://x")
}


class FakeTI(SimpleNamespace):
    """The task instance fields and XCom calls the operators use."""

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed[key] = value

    def xcom_pull(self, task_ids: str | None = None, key: str = "return_value") -> Any:
        return self.pulled.get(task_ids)


def context(run_id: str = "manual__1", known: dict[str, str] | None = None) -> dict[str, Any]:
    """A task context whose outlet events are Airflow's own accessors; ``known`` maps the
    asset URIs Airflow knows to their declared names."""
    ti = FakeTI(dag_id="etl", run_id=run_id, task_id="run.merge", try_number=1)
    ti.log_url, ti.pushed, ti.pulled = "http://airflow/x", {}, {}
    started = datetime.now(UTC) - timedelta(minutes=1)
    dag_run = SimpleNamespace(run_after=started, logical_date=None, start_date=started)
    return {"ti": ti, "dag_run": dag_run, "outlet_events": _outlet_events(known or {})}


def _outlet_events(known: dict[str, str]) -> OutletEventAccessors:
    def lookup(name: str | None = None, uri: str | None = None) -> Asset:
        if uri not in known:
            raise AirflowRuntimeError(ErrorResponse(error=ErrorType.ASSET_NOT_FOUND))
        return Asset(name=known[uri], uri=uri)

    OutletEventAccessors._asset_ref_cache.clear()
    events = OutletEventAccessors()
    events._get_asset_from_db = lookup  # type: ignore[method-assign]
    return events


def run_branch(**options: Any) -> GravelerRunBranch:
    with DAG("etl", schedule=None), GravelerRunBranch("lake", group_id="run", **options) as group:
        pass
    return group


def alias_events(ctx: dict[str, Any], group: GravelerRunBranch) -> list[tuple[str, str, dict]]:
    accessor = ctx["outlet_events"][group.merge.alias]
    return [
        (e.dest_asset_key.name, e.dest_asset_key.uri, e.extra) for e in accessor.asset_alias_events
    ]


def publish_once(
    repo, group: GravelerRunBranch, ctx: dict[str, Any], writes: dict[str, bytes]
) -> str:
    branch = group.create.run(repo, ctx)
    for path, data in writes.items():
        repo.put(branch, path, data)
    return group.merge.run(repo, ctx)


def test_a_cleared_merge_returns_the_first_publication(repo):
    group = run_branch()
    ctx = context()
    first = publish_once(repo, group, ctx, {"tables/t/a.csv": b"a"})
    repo.put("main", "later.csv", b"a later run")
    repo.commit("main", "later")
    assert group.merge.run(repo, context()) == first  # the branch is gone: no BranchNotFound
    again = publish_once(repo, group, context(), {"tables/t/a.csv": b"a"})  # whole run cleared
    assert again == first
    merges = [c for c in repo.log("main", first_parent=True) if c.metadata.get(runs.RUN_KEY)]
    assert [c.id for c in merges] == [first]
    assert merges[0].metadata[runs.RUN_KEY] == "airflow/etl/manual__1/run"
    assert [b.name for b in repo.list_branches()] == ["main"]


def test_publish_again_merges_a_cleared_run_when_asked(repo):
    group = run_branch(publish_again="{{ params.again }}")
    first = publish_once(repo, group, context(), {"x.csv": b"1"})
    group.merge.publish_again = "True"  # as rendered from the template
    second = publish_once(repo, group, context(), {"x.csv": b"2"})
    assert second != first and repo.get("main", "x.csv") == b"2"


def _conflicting(repo, group: GravelerRunBranch) -> tuple[dict[str, Any], str]:
    repo.put("main", "k.csv", b"base")
    repo.commit("main", "base")
    ctx = context()
    group.create.run(repo, ctx)
    branch = group.create.run_of(ctx).branch
    repo.put(branch, "k.csv", b"run")
    repo.put("main", "k.csv", b"main")
    repo.commit("main", "main moved")
    return ctx, branch


def test_a_conflict_fails_without_retry_and_keeps_the_branch_as_it_says(repo):
    group = run_branch()
    ctx, branch = _conflicting(repo, group)
    head = repo.branch("main").commit_id
    with pytest.raises(AirflowFailException) as failed:
        group.merge.run(repo, ctx)
    message = str(failed.value)
    assert "k.csv" in message and "Nothing was published" in message
    kept = repo.branch(branch).commit_id
    assert f"kept, committed as {kept}, on branch {branch!r}" in message
    assert repo.branch("main").commit_id == head and repo.get(branch, "k.csv") == b"run"


def test_with_delete_on_failure_the_conflict_says_the_teardown_deletes_the_branch(repo):
    group = run_branch(delete_on_failure=True)
    ctx, branch = _conflicting(repo, group)
    with pytest.raises(AirflowFailException) as failed:
        group.merge.run(repo, ctx)
    kept = repo.branch(branch).commit_id
    assert f"deletes branch {branch!r}" in str(failed.value) and kept in str(failed.value)
    assert group.discard is not None
    group.discard.run(repo, ctx)  # what the teardown then does
    with pytest.raises(BranchNotFound):
        repo.branch(branch)
    assert repo.get_commit(kept).id == kept  # readable by ID, as the message says


def test_a_run_branch_deleted_before_publishing_fails_the_merge(repo):
    group = run_branch()
    ctx = context()
    group.create.run(repo, ctx)
    repo.delete_branch(group.create.run_of(ctx).branch)
    with pytest.raises(AirflowFailException, match="no longer exists"):
        group.merge.run(repo, ctx)


def test_events_go_to_declared_outlets_and_known_assets_only(repo):
    declared = graveler_asset("lake", "main", "tables/declared")
    group = run_branch(outlets=[declared])
    known = {"graveler://lake/main/tables/t": "the t table", "graveler://lake/main": "main"}
    ctx = context(known=known)
    writes = {"tables/t/date=1/a.csv": b"a", "tables/t/date=2/b.csv": b"b", "tables/new/x": b"x"}
    merged = publish_once(repo, group, ctx, writes)
    outlet = ctx["outlet_events"][declared]
    assert outlet.extra["changes"] == 0 and outlet.extra["commit_id"] == merged
    events = alias_events(ctx, group)
    assert [(name, uri) for name, uri, _ in events] == [
        ("the t table", "graveler://lake/main/tables/t")
    ]
    extra = events[0][2]
    assert extra["changes"] == 2 and extra["commit_id"] == merged and not extra["replayed"]
    assert extra["run"] == "airflow/etl/manual__1/run"


def test_a_failure_to_emit_events_is_logged_not_raised(repo, monkeypatch, caplog):
    from graveler_airflow import events

    def broken(*args: Any, **kwargs: Any) -> list:
        raise RuntimeError("bookkeeping failed")

    monkeypatch.setattr(events, "merge_changes", broken)
    group = run_branch()
    ctx = context(known={"graveler://lake/main/t": "t"})
    merged = publish_once(repo, group, ctx, {"t/a.csv": b"a"})
    assert repo.branch("main").commit_id == merged
    assert "could not be emitted" in caplog.text and "bookkeeping failed" in caplog.text


def test_upload_and_get_object_operators(repo, tmp_path: Path):
    from graveler_airflow import GravelerGetObjectOperator, GravelerUploadOperator

    up = GravelerUploadOperator(
        task_id="up", repository="lake", branch="main", path="a/b.txt", content="héllo"
    )
    doc = up.run(repo, CONTEXT)
    assert doc["path"] == "a/b.txt" and doc["size"] == len("héllo".encode())
    (tmp_path / "f.bin").write_bytes(b"\x00" * 10)
    GravelerUploadOperator(
        task_id="up2",
        repository="lake",
        branch="main",
        path="f.bin",
        filename=str(tmp_path / "f.bin"),
    ).run(repo, CONTEXT)
    repo.commit("main", "uploads")
    get = GravelerGetObjectOperator(task_id="get", repository="lake", ref="main", path="a/b.txt")
    assert get.run(repo, CONTEXT) == "héllo"
    to_file = GravelerGetObjectOperator(
        task_id="g2", repository="lake", ref="main~0", path="f.bin", filename=str(tmp_path / "o/f")
    )
    assert (
        to_file.run(repo, CONTEXT)["size"] == 10 and (tmp_path / "o/f").read_bytes() == b"\x00" * 10
    )
    small = GravelerGetObjectOperator(
        task_id="g3", repository="lake", ref="main", path="f.bin", max_bytes=4
    )
    with pytest.raises(InvalidArgument, match="filename="):
        small.run(repo, CONTEXT)
    with pytest.raises(InvalidArgument, match="exactly one"):
        GravelerUploadOperator(task_id="u", repository="lake", branch="main", path="x")


def test_prune_operator(repo):
    from graveler_airflow import GravelerPruneBranchesOperator

    repo.create_branch("airflow-etl-old", "main")
    repo.create_branch("feature", "main")
    listed = GravelerPruneBranchesOperator(
        task_id="p", repository="lake", older_than="0s", dry_run=True
    ).run(repo, CONTEXT)
    assert listed == ["airflow-etl-old"] and repo.branch("airflow-etl-old")
    op = GravelerPruneBranchesOperator(task_id="p", repository="lake", older_than=timedelta(days=1))
    assert op.run(repo, CONTEXT) == []
    op.older_than = "0s"
    assert op.run(repo, CONTEXT) == ["airflow-etl-old"]
    assert sorted(b.name for b in repo.list_branches()) == ["feature", "main"]


def _merge(repo, source: str, dest: str, fast_forward: bool):
    return merge_with_lineage(
        repo,
        CONTEXT,
        source=source,
        dest=dest,
        strategy=None,
        message=None,
        metadata=None,
        committer="tests",
        options=MergeOptions(fast_forward=fast_forward),
    )


def test_before_is_the_old_head_for_a_fast_forward_onto_a_merge_commit(repo):
    main_before = repo.branch("main").commit_id
    repo.create_branch("feature", "main")
    repo.create_branch("side", "main")
    repo.put("side", "a", b"a")
    repo.commit("side", "a")
    repo.put("feature", "b", b"b")
    repo.commit("feature", "b")
    repo.merge("side", "feature")  # feature's head is now a merge commit
    merged = _merge(repo, "feature", "main", fast_forward=True)
    assert merged is not None and merged.commit.id == repo.branch("feature").commit_id
    assert len(merged.commit.parents) == 2 and merged.before.id == main_before


def test_run_branch_merge_options(repo):
    """lakectl's merge options on the run-branch group: squash publishes one commit over the
    target's head; ff_only fails (no retry) when the target moved, keeping the branch;
    contradictory options fail when the DAG is parsed."""
    head = repo.branch("main").commit_id
    squashed = publish_once(repo, run_branch(squash=True), context("squashed"), {"s.csv": b"s"})
    assert repo.get_commit(squashed).parents == (head,)
    group = run_branch(ff_only=True)
    ctx = context("strict")
    branch = group.create.run(repo, ctx)
    repo.put(branch, "f.csv", b"f")
    repo.put("main", "moved.csv", b"m")
    repo.commit("main", "main moved")
    with pytest.raises(AirflowFailException) as failed:
        group.merge.run(repo, ctx)
    assert "cannot fast-forward" in str(failed.value) and "kept, committed as" in str(failed.value)
    assert repo.branch(branch)
    with pytest.raises(InvalidArgument, match="--ff-only"):
        run_branch(ff_only=True, squash=True)


def test_merge_operator_merge_options(repo):
    from graveler_airflow.operators.graveler import GravelerMergeOperator

    def merge(**options: Any) -> str:
        op = GravelerMergeOperator(
            task_id="merge",
            repository=repo.name,
            source_ref="feature",
            emit_asset_events=False,
            **options,
        )
        return op.run(repo, CONTEXT)

    repo.create_branch("feature", "main")
    repo.put("feature", "b", b"b")
    feature = repo.commit("feature", "b").id
    assert merge(ff_only=True) == feature  # ff_only allows the fast-forward it insists on
    assert repo.get_commit(merge(allow_empty=True)).parents == (feature,)  # already merged
    repo.put("feature", "c", b"c")
    repo.commit("feature", "c")
    head = repo.branch("main").commit_id
    assert repo.get_commit(merge(squash=True)).parents == (head,)
    repo.put("feature", "d", b"d")
    repo.commit("feature", "d")  # main (squashed) and feature have diverged
    with pytest.raises(NotFastForward):
        merge(ff_only=True)
    with pytest.raises(InvalidArgument):
        merge(ff_only=True, fast_forward=False)


def test_a_branch_no_asset_uri_can_name_fails_before_the_merge(repo):
    """Asset events name the destination as graveler://repo/branch: a branch with '/' cannot
    be named, and the operator must refuse before merging, not after committing the merge."""
    from graveler_airflow.operators.graveler import GravelerMergeOperator

    from graveler.core.model import Branch
    from graveler.views.layers import new_staging_token

    head = repo.branch("main").commit_id  # no such branch can be created now: one made by an
    # older version is inserted as it was stored then
    repo.refs.create_branch(repo.name, Branch("team/main", head, new_staging_token(repo.name, "t")))
    repo.create_branch("feature", "main")
    repo.put("feature", "b", b"b")
    repo.commit("feature", "b")
    before = repo.branch("team/main").commit_id
    op = GravelerMergeOperator(
        task_id="merge", repository=repo.name, source_ref="feature", destination_branch="team/main"
    )
    with pytest.raises(InvalidURI):
        op.run(repo, CONTEXT)
    assert repo.branch("team/main").commit_id == before


def test_tag_operator_accepts_its_own_tag_on_retry_only(repo):
    from graveler_airflow.operators.graveler import GravelerTagOperator

    def tag(ref: str):
        op = GravelerTagOperator(
            task_id="t", repository=repo.name, tag="v1", ref=ref, exist_ok=True
        )
        return op.run(repo, CONTEXT)

    first = tag("main")
    assert tag("main") == first  # a retry finds its own tag
    repo.put("main", "x", b"x")
    repo.commit("main", "moves on")
    with pytest.raises(AlreadyExists):
        tag("main")  # the tag names another commit


def test_run_branch_tasks_link_to_their_branch(monkeypatch, tmp_path: Path):
    import json

    from graveler_airflow.links import GravelerRunBranchLink
    from graveler_airflow.run_branch import run_branch_name

    group = run_branch()
    key = SimpleNamespace(dag_id="etl", run_id="manual__1", task_id="run.merge", map_index=-1)
    branch = run_branch_name("etl", "manual__1", "airflow", "run")
    extra: dict[str, str] = {"database_url": f"sqlite:///{tmp_path}/r.db"}
    monkeypatch.setenv(
        "AIRFLOW_CONN_GRAVELER_DEFAULT", json.dumps({"conn_type": "graveler", "extra": extra})
    )
    link = GravelerRunBranchLink()
    assert [type(x) for x in group.create.operator_extra_links] == [GravelerRunBranchLink]
    assert link.get_link(group.merge, ti_key=key) == f"graveler://lake/{branch}"
    extra["ui_url"] = "https://lake.example.com/{repository}/tree/{branch}"
    monkeypatch.setenv(
        "AIRFLOW_CONN_GRAVELER_DEFAULT", json.dumps({"conn_type": "graveler", "extra": extra})
    )
    assert link.get_link(group.create, ti_key=key) == f"https://lake.example.com/lake/tree/{branch}"
