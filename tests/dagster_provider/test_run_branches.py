"""Acceptance: a successful run is merged into main by the run-status sensor (one merge commit
naming the run); a failing run leaves main where it was; inputs come from the run branch only
when written in this run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
import pytest
from graveler_dagster import (
    GravelerIOManager,
    GravelerResource,
    TypeHandler,
    graveler_definitions,
)
from graveler_dagster.handlers import check
from graveler_dagster.runs import META_PREFIX, RUN_ID_KEY

from graveler.core.errors import BranchNotFound, InvalidArgument
from tests.dagster_provider.conftest import evaluate_run_sensor, make_resource

ORDERS = pd.DataFrame({"id": [1, 2, 3], "amount": [10.0, 25.5, 7.25]})


@dg.asset
def orders() -> pd.DataFrame:
    return ORDERS


@dg.asset
def summary(orders: pd.DataFrame) -> dict[str, float]:
    return {"rows": float(len(orders)), "total": float(orders["amount"].sum())}


@dg.asset
def broken(orders: pd.DataFrame) -> pd.DataFrame:
    raise ValueError("validation failed: negative amounts")


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_successful_run_is_merged_by_the_sensor(
    backend: str, tmp_path: Path, instance: dg.DagsterInstance, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_schema_url")
    resource = make_resource(tmp_path, url)
    pieces = graveler_definitions(resource)
    result = dg.materialize([orders, summary], instance=instance, resources=pieces["resources"])
    assert result.success
    repo = resource.get_repository()
    try:
        main_before = repo.resolve("main").commit
        branch = resource.run_branch_name(result.run_id)
        assert [e.path for e in repo.iter_objects(branch)] == ["orders", "summary"]
        assert list(repo.iter_objects("main")) == []  # nothing in main before the sensor

        merge_sensor = pieces["sensors"][0]
        assert evaluate_run_sensor(merge_sensor, instance, result, pieces["resources"]) is None

        head = repo.resolve("main").commit
        assert list(repo.log("main", amount=2, first_parent=True)) == [head, main_before]
        assert head.parents[0] == main_before.id and len(head.parents) == 2
        assert result.run_id in head.message
        assert head.metadata[f"{META_PREFIX}run_id"] == result.run_id
        assert head.metadata[f"{META_PREFIX}url[url:ui]"].endswith(f"/runs/{result.run_id}")
        assert pd.read_parquet(repo.open("main", "orders")).equals(ORDERS)
        assert repo.stat("main", "summary").metadata[RUN_ID_KEY] == result.run_id
        with pytest.raises(BranchNotFound):
            repo.branch(branch)
        tags = instance.get_run_by_id(result.run_id).tags  # type: ignore[union-attr]
        assert tags["graveler/merge"] == "merged"
        assert tags["graveler/merge_commit"] == head.id

        again = evaluate_run_sensor(merge_sensor, instance, result, pieces["resources"])
        assert isinstance(again, dg.SkipReason)  # idempotent: nothing left to merge
        assert repo.resolve("main").commit == head
    finally:
        resource.close()


def test_materialization_metadata(resource: Any, instance: dg.DagsterInstance) -> None:
    """Each materialization names its value by commit (``graveler/uri`` = ``dagster/uri``),
    which still resolves once the run branch is merged and deleted; tables carry Dagster's
    table metadata."""
    pieces = graveler_definitions(resource)
    result = dg.materialize([orders, summary], instance=instance, resources=pieces["resources"])
    meta = {
        e.asset_key.to_user_string(): e.materialization.metadata
        for e in result.get_asset_materialization_events()
    }
    branch = resource.run_branch_name(result.run_id)
    repo = resource.get_repository()
    try:
        entry = repo.stat(branch, "orders")
        commit = meta["orders"]["graveler/commit"].value
        uri = f"graveler://lake/{commit}/orders"
        assert meta["orders"]["graveler/uri"].value == uri
        assert meta["orders"]["dagster/uri"].value == uri
        assert meta["orders"]["graveler/branch"].value == branch
        assert meta["orders"]["graveler/size"].value == entry.size
        assert meta["orders"]["dagster/row_count"].value == 3
        assert meta["orders"]["dagster/table_name"].value == "lake.orders"
        columns = meta["orders"]["dagster/column_schema"].value.columns
        assert [(c.name, c.type) for c in columns] == [("id", "int64"), ("amount", "float64")]
        assert meta["orders"]["graveler/format"].value == "pandas"
        assert meta["summary"]["graveler/format"].value == "pickle"
        assert "dagster/row_count" not in meta["summary"]
        assert "dagster/column_schema" not in meta["summary"]
        assert repo.resolve(branch).commit.id == meta["summary"]["graveler/commit"].value
        assert repo.get_commit(commit).message == "Materialize orders"

        evaluate_run_sensor(pieces["sensors"][0], instance, result, pieces["resources"])
        with pytest.raises(BranchNotFound):
            repo.branch(branch)
        assert pd.read_parquet(repo.open(commit, "orders")).equals(ORDERS)  # still resolves
    finally:
        resource.close()


@pytest.mark.parametrize("delete_branch", [False, True])
def test_failed_run_leaves_main_untouched(
    resource: Any, instance: dg.DagsterInstance, delete_branch: bool
) -> None:
    pieces = graveler_definitions(resource, delete_failed_branches=delete_branch)
    repo = resource.get_repository()
    try:
        main_before = repo.resolve("main").commit
        result = dg.materialize(
            [orders, broken], instance=instance, resources=pieces["resources"], raise_on_error=False
        )
        assert not result.success
        branch = resource.run_branch_name(result.run_id)
        assert [e.path for e in repo.iter_objects(branch)] == ["orders"]

        failure_sensor = pieces["sensors"][1]
        evaluate_run_sensor(failure_sensor, instance, result, pieces["resources"])

        assert repo.resolve("main").commit == main_before
        assert list(repo.iter_objects("main")) == []
        tags = instance.get_run_by_id(result.run_id).tags  # type: ignore[union-attr]
        if delete_branch:
            assert branch not in {b.name for b in repo.list_branches()}
            assert tags["graveler/merge"] == "discarded"
        else:  # kept for inspection, with the data the run did produce
            assert pd.read_parquet(repo.open(branch, "orders")).equals(ORDERS)
            assert tags["graveler/branch"] == branch
            assert tags["graveler/merge"] == "kept"
    finally:
        resource.close()


def test_inputs_read_run_branch_only_for_this_runs_writes(
    resource: Any, instance: dg.DagsterInstance
) -> None:
    """``stale`` is on the run branch (cut from main when the run started) but another writer
    updates it on main meanwhile: the run must read main's. ``fresh`` is written in this run:
    it must come from the run branch (main has none)."""
    pieces = graveler_definitions(resource)
    repo = resource.get_repository()
    repo.put(
        "main",
        "stale",
        pd.DataFrame({"v": [1]}).to_parquet(),
        metadata={"dagster/format": "pandas"},
    )
    repo.commit("main", "stale v1")

    @dg.asset
    def fresh() -> list[int]:
        return [1, 2, 3]

    @dg.asset(deps=[fresh])
    def concurrent_merge() -> None:
        other = pd.DataFrame({"v": [2]}).to_parquet()
        repo.put("main", "stale", other, metadata={"dagster/format": "pandas"})
        repo.commit("main", "stale v2 from another run")

    @dg.asset(deps=[concurrent_merge])
    def reader(stale: pd.DataFrame, fresh: list[int]) -> dict[str, Any]:
        return {"stale": stale["v"].tolist(), "fresh": fresh}

    stale = dg.AssetSpec("stale")
    try:
        result = dg.materialize(
            [fresh, concurrent_merge, reader, stale],
            instance=instance,
            resources=pieces["resources"],
        )
        assert result.output_for_node("reader") == {"stale": [2], "fresh": [1, 2, 3]}
        branch = resource.run_branch_name(result.run_id)
        assert pd.read_parquet(repo.open(branch, "stale"))["v"].tolist() == [1]  # stale copy
    finally:
        resource.close()


@pytest.mark.parametrize("strategy", ["source-wins", None])
def test_overlapping_runs_of_one_asset(
    resource: Any, instance: dg.DagsterInstance, strategy: str | None
) -> None:
    """Two runs start from the same main and both write ``orders``; the first merges. With
    source-wins the second run's value (the latest materialization) lands; with no strategy the
    second merge conflicts: its branch is kept, the run tagged, and main keeps the first."""
    pieces = graveler_definitions(resource, merge_strategy=strategy)
    merge_sensor = pieces["sensors"][0]
    first = dg.materialize([orders], instance=instance, resources=pieces["resources"])
    second = dg.materialize([orders], instance=instance, resources=pieces["resources"])
    repo = resource.get_repository()
    try:
        assert evaluate_run_sensor(merge_sensor, instance, first, pieces["resources"]) is None
        after_first = repo.resolve("main").commit
        outcome = evaluate_run_sensor(merge_sensor, instance, second, pieces["resources"])
        writer = repo.stat("main", "orders").metadata[RUN_ID_KEY]
        tags = instance.get_run_by_id(second.run_id).tags  # type: ignore[union-attr]
        if strategy == "source-wins":
            assert outcome is None and writer == second.run_id
            assert tags["graveler/merge"] == "merged"
        else:
            assert isinstance(outcome, dg.SkipReason) and "conflict" in (outcome.skip_message or "")
            assert writer == first.run_id and repo.resolve("main").commit == after_first
            assert tags["graveler/merge"] == "failed"
            assert repo.branch(tags["graveler/branch"]).name == resource.run_branch_name(
                second.run_id
            )
    finally:
        resource.close()


def test_none_output_stores_nothing(resource: Any, instance: dg.DagsterInstance) -> None:
    @dg.asset
    def side_effect_only():  # type: ignore[no-untyped-def]
        return None

    result = dg.materialize(
        [side_effect_only], instance=instance, resources=graveler_definitions(resource)["resources"]
    )
    repo = resource.get_repository()
    try:
        assert result.success
        assert resource.run_branch_name(result.run_id) not in {b.name for b in repo.list_branches()}
    finally:
        resource.close()


def test_an_input_whose_bytes_were_damaged_fails_the_run(
    resource: Any, instance: dg.DagsterInstance
) -> None:
    """Inputs are read through the recorded SHA-256: damaged bytes fail the step, they are
    never handed to the asset."""
    pieces = graveler_definitions(resource)
    repo = resource.get_repository()
    entry = repo.put("main", "orders", ORDERS.to_parquet(), metadata={"dagster/format": "pandas"})
    repo.commit("main", "orders")
    data = repo.store.get(entry.physical_address)
    repo.store.put(entry.physical_address, data[:-1] + bytes([data[-1] ^ 1]))
    try:
        result = dg.materialize(
            [dg.AssetSpec("orders"), summary],
            instance=instance,
            resources=pieces["resources"],
            raise_on_error=False,
        )
        assert not result.success
        failure = result.get_step_failure_events()[0].event_specific_data.error
        assert "CorruptFile" in failure.cls_name or "CorruptFile" in str(failure)
    finally:
        resource.close()


def test_op_outputs_travel_through_the_run_branch(
    resource: Any, instance: dg.DagsterInstance
) -> None:
    """Outputs of plain ops (no asset key) are stored on the run branch and read back by the
    next op."""
    pieces = graveler_definitions(resource)

    @dg.op
    def produce() -> dict[str, int]:
        return {"n": 3}

    @dg.op
    def consume(value: dict[str, int]) -> int:
        return value["n"] * 2

    @dg.job
    def pipeline() -> None:
        consume(produce())

    try:
        result = pipeline.execute_in_process(instance=instance, resources=pieces["resources"])
        assert result.success and result.output_for_node("consume") == 6
        branch = resource.run_branch_name(result.run_id)
        stored = [e.path for e in resource.get_repository().iter_objects(branch, "_dagster/")]
        assert any(p.endswith("produce/result") for p in stored), stored
    finally:
        resource.close()


class JsonHandler(TypeHandler):
    format = "json"
    content_type = "application/json"

    def handles(self, value: Any) -> bool:
        return isinstance(value, dict)

    def encode(self, value: Any) -> bytes:
        return json.dumps(value).encode()

    def decode(self, data: bytes, typing_type: Any) -> Any:
        return {**json.loads(data), "decoded_by": "json"}


class JsonIOManager(GravelerIOManager):
    def type_handlers(self) -> list[TypeHandler]:
        return [JsonHandler()]


def test_type_handlers_store_their_values_their_way(
    resource: Any, instance: dg.DagsterInstance
) -> None:
    """A subclass's handler is consulted before the built-in formats, on write and on read;
    values it does not handle keep the built-in formats."""
    resources = {"graveler": resource, "io_manager": JsonIOManager(graveler=resource)}

    @dg.asset
    def stats() -> dict[str, int]:
        return {"rows": 3}

    @dg.asset
    def echoed(stats: dict[str, Any], orders: pd.DataFrame) -> dict[str, Any]:
        return {**stats, "orders": len(orders)}

    try:
        result = dg.materialize([stats, orders, echoed], instance=instance, resources=resources)
        assert result.output_for_node("echoed") == {"rows": 3, "decoded_by": "json", "orders": 3}
        repo = resource.get_repository()
        branch = resource.run_branch_name(result.run_id)
        entry = repo.stat(branch, "stats")
        assert entry.content_type == "application/json" and repo.get(branch, "stats") == (
            b'{"rows": 3}'
        )
        assert entry.metadata["dagster/format"] == "json"
        assert repo.stat(branch, "orders").metadata["dagster/format"] == "pandas"

        class Clash(JsonHandler):
            format = "pickle"

        with pytest.raises(InvalidArgument, match="own format name"):
            check([Clash()])
    finally:
        resource.close()


def test_the_resource_merge_options_shape_the_publication(
    tmp_path: Path, sqlite_url: str, instance: dg.DagsterInstance
) -> None:
    """merge_squash: the sensor publishes one commit over main's head; merge_ff_only: a main
    that moved refuses the merge, the run is tagged failed and keeps its branch;
    contradictory fields fail when the options are read."""
    from graveler_dagster.runs import publish_run

    from graveler.core.errors import NotFastForward

    def configured(**fields: bool) -> GravelerResource:
        base = make_resource(tmp_path, sqlite_url)
        return GravelerResource(**{**base.model_dump(), **fields})

    squash = configured(merge_squash=True)
    pieces = graveler_definitions(squash)
    result = dg.materialize([orders], instance=instance, resources=pieces["resources"])
    repo = squash.get_repository()
    try:
        before = repo.resolve("main").commit
        assert (
            evaluate_run_sensor(pieces["sensors"][0], instance, result, pieces["resources"]) is None
        )
        head = repo.resolve("main").commit
        assert (
            head.parents == (before.id,) and head.metadata[f"{META_PREFIX}run_id"] == result.run_id
        )

        strict = configured(merge_ff_only=True)
        pieces = graveler_definitions(strict)
        second = dg.materialize([orders], instance=instance, resources=pieces["resources"])
        repo.put("main", "moved", b"m")
        repo.commit("main", "main moved")
        run = instance.get_run_by_id(second.run_id)
        with pytest.raises(NotFastForward):
            publish_run(strict, repo, instance, run)  # type: ignore[arg-type]
        assert instance.get_run_by_id(second.run_id).tags["graveler/merge"] == "failed"  # type: ignore[union-attr]
        assert repo.branch(strict.run_branch_name(second.run_id))
        with pytest.raises(InvalidArgument):
            configured(merge_ff_only=True, merge_squash=True).merge_options()
    finally:
        squash.close()
