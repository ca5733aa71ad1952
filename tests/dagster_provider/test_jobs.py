"""Jobs run through ``execute_job`` (reconstructable, as a deployment runs them): with the
multiprocess executor, step processes with their own clients write and commit on one run
branch concurrently. (Re-execution from failure is tested against the real webserver and
daemon in ``test_deployment.py``.)"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
import pytest
from graveler_dagster import GravelerResource, graveler_definitions

from tests.dagster_provider.conftest import evaluate_run_sensor

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
    assets=[*PARTS, combined],
    jobs=[
        dg.define_asset_job(
            "parallel",
            selection=dg.AssetSelection.groups("parallel"),
            executor_def=dg.multiprocess_executor.configured({"max_concurrent": 3}),
        ),
    ],
    resources=PIECES["resources"],
    sensors=PIECES["sensors"],
)


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


def _failures(result: Any) -> list[str]:
    """The errors of a run's failed steps (and of the run), for the assertion's message."""
    return [
        str(event.event_specific_data.error.to_string())
        for event in result.all_events
        if (event.is_step_failure or event.is_run_failure)
        and getattr(event.event_specific_data, "error", None) is not None
    ]


def test_parallel_step_processes_share_the_run_branch(
    env: Path, instance: dg.DagsterInstance, observed: Any
) -> None:
    """Multiprocess executor: three step processes write and commit on one run branch at the
    same time (each with its own client); nothing is lost and the merge brings all of it."""
    with dg.execute_job(dg.reconstructable(parallel_job), instance) as result:
        assert result.success, _failures(result)
        assert result.output_for_node("combined") == 1 + 2 + 3
        evaluate_run_sensor(PIECES["sensors"][0], instance, result, PIECES["resources"])  # type: ignore[arg-type]
    repo = observed()
    assert [e.path for e in repo.iter_objects("main")] == [
        "combined",
        *(f"part_{i}" for i in range(3)),
    ]
