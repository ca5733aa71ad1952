"""Jobs run through ``execute_job`` (reconstructable, as a deployment runs them):

* re-executing a failed run from failure: the new run's branch starts from the failed run's
  kept branch, so steps that are not re-run still find their outputs, and the success merges
  everything into main;
* the multiprocess executor: step processes with their own clients write and commit on one
  run branch concurrently."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def _part(i: int) -> dg.AssetsDefinition:
    @dg.asset(name=f"part_{i}", group_name="parallel")
    def _asset() -> pd.DataFrame:
        return pd.DataFrame({"i": [i] * (i + 1)})

    return _asset


PARTS = [_part(i) for i in range(3)]


@dg.asset(group_name="parallel")
def combined(part_0: pd.DataFrame, part_1: pd.DataFrame, part_2: pd.DataFrame) -> int:
    return sum(len(frame) for frame in (part_0, part_1, part_2))


DEFS = dg.Definitions(
    assets=[extracted, checked, *PARTS, combined],
    jobs=[
        dg.define_asset_job(
            "etl", selection=["extracted", "checked"], executor_def=dg.in_process_executor
        ),
        dg.define_asset_job(
            "parallel",
            selection=dg.AssetSelection.groups("parallel"),
            executor_def=dg.multiprocess_executor.configured({"max_concurrent": 3}),
        ),
    ],
    resources=PIECES["resources"],
    sensors=PIECES["sensors"],
)


def etl_job() -> dg.JobDefinition:
    return DEFS.resolve_job_def("etl")


def parallel_job() -> dg.JobDefinition:
    return DEFS.resolve_job_def("parallel")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GRAVELER_TEST_DB_URL", f"sqlite:///{tmp_path / 'gv.db'}")
    monkeypatch.setenv("GRAVELER_TEST_HOME", str(tmp_path / "gvhome"))
    return tmp_path


@pytest.fixture
def observed() -> Iterator[Any]:
    """The repository, seen through a resource with the environment's settings."""
    resource = RESOURCE.model_copy(
        update={
            "database_url": os.environ["GRAVELER_TEST_DB_URL"],
            "home": os.environ["GRAVELER_TEST_HOME"],
        }
    )
    yield resource.get_repository
    resource.close()


def test_reexecution_from_failure_continues_on_the_failed_runs_branch(
    env: Path, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch, observed: Any
) -> None:
    flag = env / "fail"
    flag.touch()
    monkeypatch.setenv(FAIL_FLAG, str(flag))
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

    repo = observed()
    head = repo.resolve("main").commit
    assert [e.path for e in repo.iter_objects("main")] == ["checked", "extracted"]
    assert second.run_id in head.message
    # the failed run's branch was kept by policy; the re-execution's is merged and gone
    branches = {b.name for b in repo.list_branches()}
    assert branches == {"main", RESOURCE.run_branch_name(first.run_id)}


def test_parallel_step_processes_share_the_run_branch(
    env: Path, instance: dg.DagsterInstance, observed: Any
) -> None:
    """Multiprocess executor: three step processes write and commit on one run branch at the
    same time (each with its own client); nothing is lost and the merge brings all of it."""
    with dg.execute_job(dg.reconstructable(parallel_job), instance) as result:
        assert result.success
        assert result.output_for_node("combined") == 1 + 2 + 3
        evaluate_run_sensor(PIECES["sensors"][0], instance, result, PIECES["resources"])  # type: ignore[arg-type]
    repo = observed()
    assert [e.path for e in repo.iter_objects("main")] == [
        "combined",
        *(f"part_{i}" for i in range(3)),
    ]
