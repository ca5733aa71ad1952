"""Acceptance: partitioned assets round-trip -- one object per partition, each run merged by the
sensor, loaded back per partition or all at once; frames convert between libraries."""

from typing import Any

import dagster as dg
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from graveler_dagster import graveler_definitions

from graveler.core.errors import InvalidArgument
from tests.dagster_provider.conftest import evaluate_run_sensor

DAYS = dg.StaticPartitionsDefinition(["2024-01-01", "2024-01-02", "2024-01-03"])


def frame_for(day: str) -> pd.DataFrame:
    n = int(day[-1])
    return pd.DataFrame({"day": [day] * n, "amount": [float(i) for i in range(n)]})


@dg.asset(partitions_def=DAYS, key_prefix=["sales"])
def daily(context: dg.AssetExecutionContext) -> pd.DataFrame:
    return frame_for(context.partition_key)


@dg.asset(partitions_def=DAYS, key_prefix=["sales"], ins={"daily": dg.AssetIn(["sales", "daily"])})
def daily_total(daily: pl.DataFrame) -> pa.Table:
    assert isinstance(daily, pl.DataFrame)  # written by pandas, read as polars
    return daily.group_by("day").agg(pl.col("amount").sum()).to_arrow()


@dg.asset(ins={"daily": dg.AssetIn(["sales", "daily"])})
def all_days(daily: dict[str, pd.DataFrame]) -> dict[str, int]:
    return {day: len(frame) for day, frame in daily.items()}


def test_partitioned_assets_round_trip(resource: Any, instance: dg.DagsterInstance) -> None:
    pieces = graveler_definitions(resource)
    merge_sensor = pieces["sensors"][0]
    repo = resource.get_repository()
    try:
        for day in DAYS.get_partition_keys():
            result = dg.materialize(
                [daily, daily_total],
                partition_key=day,
                instance=instance,
                resources=pieces["resources"],
            )
            assert result.success
            table = result.output_for_node("sales__daily_total")
            assert isinstance(table, pa.Table)
            assert table.column("amount").to_pylist() == [frame_for(day)["amount"].sum()]
            evaluate_run_sensor(merge_sensor, instance, result, pieces["resources"])

        paths = [e.path for e in repo.iter_objects("main", "sales/")]
        assert paths == [
            f"sales/{a}/{d}" for a in ("daily", "daily_total") for d in DAYS.get_partition_keys()
        ]
        for day in DAYS.get_partition_keys():
            stored = pd.read_parquet(repo.open("main", f"sales/daily/{day}"))
            assert stored.equals(frame_for(day))

        result = dg.materialize(
            [all_days, daily.to_source_asset()], instance=instance, resources=pieces["resources"]
        )
        assert result.output_for_node("all_days") == {
            "2024-01-01": 1,
            "2024-01-02": 2,
            "2024-01-03": 3,
        }
    finally:
        resource.close()


def test_multi_partition_run_needs_a_dict_and_writes_nothing_otherwise(
    resource: Any, instance: dg.DagsterInstance
) -> None:
    @dg.asset(partitions_def=DAYS, name="ranged")
    def ranged(context: dg.AssetExecutionContext) -> Any:
        keys = context.partition_keys
        return (
            frame_for(keys[0])
            if context.run.tags.get("shape") == "frame"
            else {k: frame_for(k) for k in keys}
        )

    pieces = graveler_definitions(resource)
    repo = resource.get_repository()
    rng = {
        "dagster/asset_partition_range_start": "2024-01-01",
        "dagster/asset_partition_range_end": "2024-01-02",
    }
    try:
        bad = dg.materialize(
            [ranged],
            instance=instance,
            resources=pieces["resources"],
            tags={**rng, "shape": "frame"},
            raise_on_error=False,
        )
        assert not bad.success
        failure = bad.get_step_failure_events()[0].step_failure_data.error
        assert failure is not None
        assert "InvalidArgument" in failure.to_string()
        assert "return a dict mapping each partition key" in failure.to_string()
        assert resource.run_branch_name(bad.run_id) not in {b.name for b in repo.list_branches()}

        good = dg.materialize([ranged], instance=instance, resources=pieces["resources"], tags=rng)
        branch = resource.run_branch_name(good.run_id)
        assert [e.path for e in repo.iter_objects(branch)] == [
            "ranged/2024-01-01",
            "ranged/2024-01-02",
        ]
    finally:
        resource.close()


@pytest.mark.parametrize(
    "value",
    [
        pd.DataFrame({"a": [1, 2]}),
        pl.DataFrame({"a": [1, 2]}),
        pa.table({"a": [1, 2]}),
        {"plain": ("python", 1)},
    ],
    ids=["pandas", "polars", "pyarrow", "pickle"],
)
def test_value_types_round_trip(value: Any) -> None:
    from graveler_dagster import formats

    enc = formats.encode(value)
    back = formats.load(enc.data, enc.metadata("run-1"), enc.content_type, "graveler://l/m/v")
    if isinstance(value, (pd.DataFrame, pl.DataFrame, pa.Table)):
        assert back.equals(value)
    else:
        assert back == value
    assert enc.rows == (None if isinstance(value, dict) else 2)


def test_unpicklable_value_is_a_typed_error() -> None:
    from graveler_dagster import formats

    with pytest.raises(InvalidArgument, match="cannot pickle"):
        formats.encode(lambda: None)
