"""System test: the example project in dags_examples/dagster (a PySpark asset and a pandas
asset) runs for real, writes to its run branch, and the sensor merges it into main."""

from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
from graveler_dagster.runs import META_PREFIX

from dags_examples.dagster.definitions import EVENTS_PREFIX, build_definitions
from tests.dagster_provider.conftest import evaluate_run_sensor, make_resource


def expected_revenue() -> pd.DataFrame:
    ids = pd.Series(range(1000))
    events = pd.DataFrame(
        {"day": "2024-01-0" + (ids % 3 + 1).astype(str), "amount": (ids % 17).astype(float)}
    )
    return events.groupby("day", as_index=False)["amount"].sum()


def test_example_pipeline_runs_on_its_branch_and_merges(
    spark: Any, tmp_path: Path, sqlite_url: str, instance: dg.DagsterInstance
) -> None:
    resource = make_resource(tmp_path, sqlite_url)
    defs = build_definitions(resource)
    job = defs.resolve_implicit_global_asset_job_def()
    repo = resource.get_repository()
    try:
        result = job.execute_in_process(instance=instance)
        assert result.success
        branch = resource.run_branch_name(result.run_id)
        listed = [e.path for e in repo.iter_objects(branch, EVENTS_PREFIX + "/")]
        parts = [p for p in listed if "/part-" in p]  # and the table's overwrite marker
        assert len(parts) == 2 and all(p.endswith(".parquet") for p in parts)
        assert listed == [f"{EVENTS_PREFIX}/_graveler_table.json", *parts]
        assert list(repo.iter_objects("main")) == []

        sensor = defs.resolve_sensor_def("graveler_merge_on_success")
        evaluate_run_sensor(sensor, instance, result, dict(defs.resources or {}))
        head = repo.resolve("main").commit
        assert head.metadata[f"{META_PREFIX}run_id"] == result.run_id
        assert [e.path for e in repo.iter_objects("main", EVENTS_PREFIX + "/")] == listed
        revenue = pd.read_parquet(repo.open("main", "daily_revenue"))
        pd.testing.assert_frame_equal(revenue, expected_revenue())

        # a run of the pandas asset alone reads the Spark output from main
        again = job.execute_in_process(
            instance=instance, asset_selection=[dg.AssetKey("daily_revenue")]
        )
        pd.testing.assert_frame_equal(again.output_for_node("daily_revenue"), expected_revenue())
    finally:
        resource.close()
