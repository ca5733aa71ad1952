"""GravelerIcebergIOManager: assets as Iceberg tables on the run's branch, published by the
run lifecycle and merged by Iceberg's rules; partitioned assets, column selection, the
table metadata Dagster shows, and two runs appending to (or overwriting) one table."""

from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
import pyarrow as pa
import pytest
from graveler_dagster import GravelerIcebergIOManager, GravelerResource, publish_run
from graveler_dagster.runs import RUN_ID_KEY

from graveler.core.errors import TableConflict
from graveler.tables.iceberg import GravelerCatalog
from tests.dagster_provider.conftest import make_resource

REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])
DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-04")


@dg.asset
def orders() -> pd.DataFrame:
    return pd.DataFrame({"id": [1, 2, 3], "amount": [10.0, 25.5, 7.25], "region": ["eu"] * 3})


@dg.asset(ins={"orders": dg.AssetIn(metadata={"columns": ["amount"]})})
def total(orders: pa.Table) -> pd.DataFrame:
    assert orders.column_names == ["amount"]
    return pd.DataFrame({"total": [sum(orders.column("amount").to_pylist())]})


@dg.asset(partitions_def=REGIONS, metadata={"partition_expr": "region"})
def sales(context: dg.AssetExecutionContext) -> pa.Table:
    region = context.partition_key
    return pa.table({"region": [region, region], "amount": [1.0, 2.0]})


@dg.asset(partitions_def=DAYS, metadata={"partition_expr": "ts"})
def clicks(context: dg.AssetExecutionContext) -> pd.DataFrame:
    day = pd.Timestamp(context.partition_key)
    return pd.DataFrame({"ts": [day, day + pd.Timedelta(hours=5)], "n": [1, 2]})


@dg.asset
def all_sales(sales: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"rows": [len(sales)], "regions": [",".join(sorted(set(sales["region"])))]})


@dg.asset(metadata={"write_mode": "append"})
def events() -> pa.Table:
    return pa.table({"source": ["run"]})


def resources(resource: GravelerResource) -> dict[str, Any]:
    return {"graveler": resource, "io_manager": GravelerIcebergIOManager(graveler=resource)}


def materialize(
    assets: list[Any], instance: dg.DagsterInstance, resource: GravelerResource, **kw: Any
) -> dg.ExecuteInProcessResult:
    result = dg.materialize(assets, instance=instance, resources=resources(resource), **kw)
    assert result.success
    return result


def publish(resource: GravelerResource, instance: Any, result: Any, strategy: str | None) -> Any:
    run = instance.get_run_by_id(result.run_id)
    return publish_run(resource, resource.get_repository(), instance, run, strategy)


def table(resource: GravelerResource, ref: str, name: str) -> Any:
    return GravelerCatalog("t", resource.get_repository()).load_table(f"{ref}.dagster.{name}")


@pytest.fixture
def resource(tmp_path: Path, sqlite_url: str) -> Any:
    made = make_resource(tmp_path, sqlite_url)
    yield made
    made.close()


def test_assets_are_tables_on_the_run_branch_published_on_success(
    resource: GravelerResource, instance: dg.DagsterInstance
) -> None:
    result = materialize([orders, total], instance, resource)
    branch = resource.run_branch_name(result.run_id)
    assert table(resource, branch, "orders").scan().to_arrow().num_rows == 3
    repo = resource.get_repository()
    pointer = repo.stat(branch, "dagster/orders/metadata/current.metadata.json")
    assert pointer.metadata[RUN_ID_KEY] == result.run_id
    meta = result.asset_materializations_for_node("orders")[0].metadata
    assert meta["dagster/table_name"].value == "lake.dagster.orders"
    assert [c.name for c in meta["dagster/column_schema"].schema.columns] == [
        "id",
        "amount",
        "region",
    ]
    assert meta["dagster/row_count"].value == 3
    commit, path = meta["graveler/uri"].value.split("/", 3)[3].split("/", 1)
    assert path == "dagster/orders/metadata/current.metadata.json" and len(commit) == 64
    publish(resource, instance, result, "source-wins")
    assert table(resource, "main", "total").scan().to_pandas()["total"].tolist() == [42.75]
    assert repo.get(commit, path) == repo.get("main", path)  # the recorded version is main's


def test_partitioned_assets_and_an_unpartitioned_reader(
    resource: GravelerResource, instance: dg.DagsterInstance
) -> None:
    for region in ("eu", "us"):
        run = materialize([sales], instance, resource, partition_key=region)
        publish(resource, instance, run, "source-wins")
    again = materialize([sales], instance, resource, partition_key="eu")  # replaces eu only
    publish(resource, instance, again, "source-wins")
    rows = table(resource, "main", "sales").scan().to_arrow()
    assert sorted(rows.column("region").to_pylist()) == ["eu", "eu", "us", "us"]
    spec = table(resource, "main", "sales").spec()
    assert [f.name for f in spec.fields] == ["region"]
    reader = materialize([sales, all_sales], instance, resource, selection=[all_sales])
    publish(resource, instance, reader, "source-wins")
    summary = table(resource, "main", "all_sales").scan().to_pandas()
    assert summary.to_dict("records") == [{"rows": 4, "regions": "eu,us"}]


def test_daily_partitions(resource: GravelerResource, instance: dg.DagsterInstance) -> None:
    for day in ("2026-01-01", "2026-01-02"):
        publish(
            resource, instance, materialize([clicks], instance, resource, partition_key=day), None
        )
    rewritten = materialize([clicks], instance, resource, partition_key="2026-01-02")
    publish(resource, instance, rewritten, None)
    loaded = table(resource, "main", "clicks")
    assert loaded.scan().to_arrow().num_rows == 4
    assert [f.transform.__class__.__name__ for f in loaded.spec().fields] == ["DayTransform"]


def test_concurrent_runs_appending_both_land(
    resource: GravelerResource, instance: dg.DagsterInstance
) -> None:
    first = materialize([events], instance, resource)
    publish(resource, instance, first, "source-wins")  # the table exists on main
    runs = [materialize([events], instance, resource) for _ in range(2)]  # both from main
    for run in runs:
        publish(resource, instance, run, "source-wins")
    assert table(resource, "main", "events").scan().to_arrow().num_rows == 3


def test_concurrent_overwrites_of_one_table_conflict(
    resource: GravelerResource, instance: dg.DagsterInstance
) -> None:
    """Two runs replacing one table: with the runs' strategy tag "none" the second
    publication is refused by Iceberg's rules, its branch kept and its materialization
    restated as main's version. (With source-wins it would replace the table whole.)"""
    publish(resource, instance, materialize([orders], instance, resource), None)
    tags = {"graveler/merge_strategy": "none"}
    runs = [materialize([orders], instance, resource, tags=tags) for _ in range(2)]
    publish(resource, instance, runs[0], "source-wins")
    repo = resource.get_repository()
    head = repo.resolve("main").commit.id
    with pytest.raises(TableConflict):
        publish(resource, instance, runs[1], "source-wins")
    assert repo.resolve("main").commit.id == head
    refused = instance.get_run_by_id(runs[1].run_id)
    assert refused is not None and refused.tags["graveler/merge"] == "failed"
    assert repo.branch_exists(resource.run_branch_name(runs[1].run_id))
    latest = instance.get_latest_materialization_event(dg.AssetKey("orders"))
    assert latest is not None and latest.run_id == ""  # restated: main's version
    restated = latest.asset_materialization.metadata["graveler/uri"].value  # type: ignore[union-attr]
    assert head in restated


def test_schema_evolution_adds_columns(
    resource: GravelerResource, instance: dg.DagsterInstance
) -> None:
    publish(resource, instance, materialize([orders], instance, resource), None)

    @dg.asset(name="orders")
    def wider() -> pd.DataFrame:
        return pd.DataFrame({"id": [4], "amount": [1.0], "region": ["us"], "note": ["new"]})

    publish(resource, instance, materialize([wider], instance, resource), None)
    loaded = table(resource, "main", "orders")
    assert loaded.schema().column_names == ["id", "amount", "region", "note"]
    assert loaded.scan().to_arrow().num_rows == 1
