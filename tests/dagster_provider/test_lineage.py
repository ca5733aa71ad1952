"""Acceptance: inputs read the version Dagster's lineage names, and Dagster's latest
materialization never names data the target does not hold.

* an upstream run that succeeded but is not merged yet is published (exactly once) by the
  downstream step that needs it, which reads the upstream's recorded commit;
* a publication refused by a conflict fails the step with a Failure that is not retried,
  whose message says the branch is kept, and the branch is there;
* a failed run's materializations are restated as the target's versions;
* ``columns`` and ``ref`` input metadata select columns and pin a ref.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
import pandas as pd
from graveler_dagster import graveler_definitions
from graveler_dagster.lineage import RESTATES_KEY

from graveler.versioning import runs
from tests.dagster_provider.conftest import evaluate_run_sensor

V1 = pd.DataFrame({"id": [1, 2], "amount": [10.0, 20.0]})
V2 = pd.DataFrame({"id": [1, 2, 3], "amount": [1.0, 2.0, 3.0]})
CURRENT = {"frame": V1}


@dg.asset
def orders() -> pd.DataFrame:
    return CURRENT["frame"]


@dg.asset(retry_policy=dg.RetryPolicy(max_retries=2))
def total(orders: pd.DataFrame) -> float:
    return float(orders["amount"].sum())


@dg.asset
def broken(orders: pd.DataFrame) -> None:
    raise ValueError("validation failed")


def merges_into_main(repo: Any, run_id: str) -> list[Any]:
    return [
        c
        for c in repo.log("main", first_parent=True)
        if c.metadata.get(runs.RUN_KEY) == f"dagster/{run_id}"
    ]


def loaded_uri(result: dg.ExecuteInProcessResult, asset: str) -> str:
    """The commit-addressed URI the run recorded for its input ``asset``."""
    for event in result.all_events:
        if event.event_type_value == "ASSET_OBSERVATION":
            observation = event.event_specific_data.asset_observation  # type: ignore[union-attr]
            if observation.asset_key == dg.AssetKey(asset):
                return str(observation.metadata["graveler/uri"].value)
    raise AssertionError(f"no input observation for {asset}")


def test_downstream_publishes_and_reads_the_unmerged_upstream(
    resource: Any, instance: dg.DagsterInstance
) -> None:
    pieces = graveler_definitions(resource)
    CURRENT["frame"] = V2
    upstream = dg.materialize([orders], instance=instance, resources=pieces["resources"])
    mat = upstream.get_asset_materialization_events()[0].materialization
    repo = resource.get_repository()
    try:
        assert list(repo.iter_objects("main")) == []  # the merge sensor has not ticked
        downstream = dg.materialize(
            [orders, total], selection=["total"], instance=instance, resources=pieces["resources"]
        )
        assert downstream.output_for_node("total") == 6.0  # the upstream's V2, not nothing
        assert loaded_uri(downstream, "orders") == mat.metadata["graveler/uri"].value
        assert len(merges_into_main(repo, upstream.run_id)) == 1
        tags = instance.get_run_by_id(upstream.run_id).tags  # type: ignore[union-attr]
        assert tags["graveler/merge"] == "merged"

        late = evaluate_run_sensor(pieces["sensors"][0], instance, upstream, pieces["resources"])
        assert isinstance(late, dg.SkipReason) and "already merged" in (late.skip_message or "")
        assert len(merges_into_main(repo, upstream.run_id)) == 1  # exactly once
    finally:
        resource.close()


def test_a_refused_publication_fails_the_step_once_and_keeps_the_branch(
    resource: Any, instance: dg.DagsterInstance
) -> None:
    pieces = graveler_definitions(resource, merge_strategy=None)
    CURRENT["frame"] = V1
    upstream = dg.materialize([orders], instance=instance, resources=pieces["resources"])
    repo = resource.get_repository()
    try:
        repo.put("main", "orders", V2.to_parquet(), metadata={"dagster/format": "pandas"})
        repo.commit("main", "another writer changed orders")
        downstream = dg.materialize(
            [orders, total],
            selection=["total"],
            instance=instance,
            resources=pieces["resources"],
            raise_on_error=False,
        )
        assert not downstream.success
        kinds = [e.event_type_value for e in downstream.all_events]
        assert kinds.count("STEP_FAILURE") == 1 and "STEP_UP_FOR_RETRY" not in kinds
        failure = downstream.get_step_failure_events()[0].step_failure_data
        branch = resource.run_branch_name(upstream.run_id)
        assert failure.error is not None and failure.error.cls_name == "Failure"
        assert f"kept on branch {branch!r}" in failure.user_failure_data.description  # type: ignore[union-attr]
        assert repo.branch(branch).name == branch
        assert merges_into_main(repo, upstream.run_id) == []
        tags = instance.get_run_by_id(upstream.run_id).tags  # type: ignore[union-attr]
        assert tags["graveler/merge"] == "failed" and tags["graveler/branch"] == branch
    finally:
        resource.close()


def test_a_failed_runs_materialization_is_restated_as_mains(
    resource: Any, instance: dg.DagsterInstance
) -> None:
    pieces = graveler_definitions(resource)
    merge_sensor, failure_sensor = pieces["sensors"]
    CURRENT["frame"] = V1
    first = dg.materialize([orders], instance=instance, resources=pieces["resources"])
    evaluate_run_sensor(merge_sensor, instance, first, pieces["resources"])
    CURRENT["frame"] = V2
    failed = dg.materialize(
        [orders, broken], instance=instance, resources=pieces["resources"], raise_on_error=False
    )
    repo = resource.get_repository()
    try:
        assert instance.get_latest_materialization_event(dg.AssetKey("orders")).run_id == (  # type: ignore[union-attr]
            failed.run_id
        )
        evaluate_run_sensor(failure_sensor, instance, failed, pieces["resources"])
        latest = instance.get_latest_materialization_event(dg.AssetKey("orders"))
        assert latest is not None and latest.run_id == ""  # a run-less restatement
        meta = latest.asset_materialization.metadata  # type: ignore[union-attr]
        head = repo.resolve("main").commit.id
        assert meta["graveler/uri"].value == f"graveler://lake/{head}/orders"
        assert meta[RESTATES_KEY].value == failed.run_id
        after = dg.materialize(
            [orders, total], selection=["total"], instance=instance, resources=pieces["resources"]
        )
        assert after.output_for_node("total") == 30.0  # main's V1, as Dagster now says
    finally:
        resource.close()


def test_columns_and_ref_input_metadata(resource: Any, instance: dg.DagsterInstance) -> None:
    pieces = graveler_definitions(resource)
    repo = resource.get_repository()
    repo.put("main", "orders", V1.to_parquet(), metadata={"dagster/format": "pandas"})
    repo.commit("main", "orders v1")
    repo.create_tag("v1", "main")
    repo.put("main", "orders", V2.to_parquet(), metadata={"dagster/format": "pandas"})
    repo.commit("main", "orders v2")

    @dg.asset(ins={"orders": dg.AssetIn(metadata={"columns": ["amount"], "ref": "v1"})})
    def amounts(orders: pd.DataFrame) -> list[Any]:
        return [*orders.columns, *orders["amount"]]

    @dg.asset(ins={"orders": dg.AssetIn(metadata={"columns": ["nope"]})})
    def missing(orders: pd.DataFrame) -> None:
        pass

    source = dg.AssetSpec("orders")
    try:
        result = dg.materialize([source, amounts], instance=instance, resources=pieces["resources"])
        assert result.output_for_node("amounts") == ["amount", 10.0, 20.0]
        bad = dg.materialize(
            [source, missing],
            instance=instance,
            resources=pieces["resources"],
            raise_on_error=False,
        )
        error = bad.get_step_failure_events()[0].step_failure_data.error
        cause = error.cause if error is not None else None
        assert cause is not None and cause.cls_name == "InvalidArgument"
        assert "['nope']" in cause.message and "'id', 'amount'" in cause.message
    finally:
        resource.close()
