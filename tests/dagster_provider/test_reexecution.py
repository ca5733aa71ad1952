"""Re-executing a failed run from failure: the new run's branch starts from the failed run's
kept branch, so the steps that are not re-run still find their outputs, and the success merges
everything into main."""

import os
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
from graveler_dagster import GravelerResource, graveler_definitions

from tests.dagster_provider.conftest import evaluate_run_sensor

FAIL_FLAG = "GRAVELER_TEST_FAIL_FLAG"


@dg.asset
def extracted() -> pd.DataFrame:
    return pd.DataFrame({"v": [1, 2, 3]})


@dg.asset
def checked(extracted: pd.DataFrame) -> int:
    if Path(os.environ[FAIL_FLAG]).exists():
        raise RuntimeError("upstream system not ready")
    return int(extracted["v"].sum())


RESOURCE = GravelerResource(
    repository="lake",
    database_url=dg.EnvVar("GRAVELER_TEST_DB_URL"),
    home=dg.EnvVar("GRAVELER_TEST_HOME"),
)
PIECES = graveler_definitions(RESOURCE)
DEFS = dg.Definitions(
    assets=[extracted, checked],
    jobs=[dg.define_asset_job("etl", executor_def=dg.in_process_executor)],
    resources=PIECES["resources"],
    sensors=PIECES["sensors"],
)


def etl_job() -> dg.JobDefinition:
    return DEFS.resolve_job_def("etl")


def test_reexecution_from_failure_continues_on_the_failed_runs_branch(
    tmp_path: Path, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = tmp_path / "fail"
    flag.touch()
    monkeypatch.setenv(FAIL_FLAG, str(flag))
    monkeypatch.setenv("GRAVELER_TEST_DB_URL", f"sqlite:///{tmp_path / 'gv.db'}")
    monkeypatch.setenv("GRAVELER_TEST_HOME", str(tmp_path / "gvhome"))
    job = dg.reconstructable(etl_job)
    with dg.execute_job(job, instance) as first:
        assert not first.success
    flag.unlink()
    options = dg.ReexecutionOptions.from_failure(first.run_id, instance)
    with dg.execute_job(job, instance, reexecution_options=options) as second:
        assert second.success
        assert [s.step_key for s in second.get_step_success_events()] == ["checked"]
        assert second.output_for_node("checked") == 6
        run = instance.get_run_by_id(second.run_id)
        assert run is not None and run.parent_run_id == first.run_id
        merge_sensor = PIECES["sensors"][0]
        evaluate_run_sensor(merge_sensor, instance, second, PIECES["resources"])  # type: ignore[arg-type]

    repo = RESOURCE.model_copy(
        update={
            "database_url": os.environ["GRAVELER_TEST_DB_URL"],
            "home": os.environ["GRAVELER_TEST_HOME"],
        }
    ).get_repository()
    head = repo.resolve("main").commit
    assert [e.path for e in repo.iter_objects("main")] == ["checked", "extracted"]
    assert second.run_id in head.message
    # the failed run's branch was kept by policy; the re-execution's is merged and gone
    branches = {b.name for b in repo.list_branches()}
    assert branches == {"main", RESOURCE.run_branch_name(first.run_id)}
