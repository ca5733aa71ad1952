"""DAGs driven by tests/airflow (copied into the session's dags folder).

Every DAG takes its repository from ``params.repository`` so that each test works in its own
repository of the shared refs database.
"""

from __future__ import annotations

import time
from typing import Any

from airflow.sdk import DAG, get_current_context, task
from graveler_airflow import (
    GravelerCommitOperator,
    GravelerCommitSensor,
    GravelerCreateBranchOperator,
    GravelerDeleteBranchOperator,
    GravelerDiffSensor,
    GravelerHook,
    GravelerMergeOperator,
    GravelerRevertOperator,
    GravelerRunBranch,
    GravelerTagOperator,
    graveler_asset,
)

REPO = "{{ params.repository }}"
BARRIER_TIMEOUT = 120.0
ASSET_REPO = "lake-assets"


def _wait(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + BARRIER_TIMEOUT
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"barrier: timed out waiting for {what}")
        time.sleep(0.1)


with (
    DAG(
        "graveler_test_run",
        schedule=None,
        params={"repository": "lake", "writes": {}, "fail_validation": False},
        tags=["graveler-tests"],
    ),
    GravelerRunBranch(REPO, group_id="run") as run,
):

    @task
    def write(branch: str) -> None:
        """Write params.writes on the run branch, then wait at the optional barriers:
        ``await_branches`` (that many branches besides main exist) and
        ``await_main_moved`` (main left the run's base commit)."""
        ctx = get_current_context()
        p = ctx["params"]
        with GravelerHook() as hook:
            repo = hook.get_repository(p["repository"])
            for path, content in p["writes"].items():
                repo.put(branch, path, content.encode())
            if p.get("await_branches"):
                _wait(lambda: len(repo.list_branches()) > p["await_branches"], "branches")
            if p.get("await_main_moved"):
                base = ctx["ti"].xcom_pull(task_ids="run.create_branch", key="base_commit_id")
                _wait(lambda: repo.branch("main").commit_id != base, "main to move")

    @task
    def validate(branch: str) -> int:
        p = get_current_context()["params"]
        with GravelerHook() as hook:
            repo = hook.get_repository(p["repository"])
            count = sum(1 for _ in repo.iter_objects(branch))
        if p["fail_validation"]:
            raise ValueError(f"validation failed on {branch}: rejected by the test")
        return count

    @task
    def branch_from_template(name: str) -> str:
        """Receives the branch name through Jinja templating (not through an XComArg)."""
        return name

    write(run.branch) >> validate(run.branch)
    branch_from_template(run.branch_template)


with (
    DAG(
        "graveler_test_discard",
        schedule=None,
        params={"repository": "lake"},
        tags=["graveler-tests"],
    ),
    GravelerRunBranch(REPO, group_id="run", delete_on_failure=True) as run,
):

    @task
    def write_then_fail(branch: str) -> None:
        p = get_current_context()["params"]
        with GravelerHook() as hook:
            hook.get_repository(p["repository"]).put(branch, "doomed.csv", b"x\n")
        raise RuntimeError("this run fails on purpose")

    write_then_fail(run.branch)


with DAG(
    "graveler_test_sensors",
    schedule=None,
    params={"repository": "lake", "branch": "incoming", "prev_commit_id": ""},
    tags=["graveler-tests"],
):
    commit_seen = GravelerCommitSensor(
        task_id="commit_sensor",
        repository=REPO,
        branch="{{ params.branch }}",
        prev_commit_id="{{ params.prev_commit_id }}",
        deferrable=True,
        trigger_poll_interval=0.2,
        timeout=300,
    )
    diff_seen = GravelerDiffSensor(
        task_id="diff_sensor",
        repository=REPO,
        branch="{{ params.branch }}",
        ref="main",
        prefix="incoming/",
        deferrable=True,
        trigger_poll_interval=0.2,
        timeout=300,
    )
    commit_seen >> diff_seen


with DAG(
    "graveler_test_operators",
    schedule=None,
    params={"repository": "lake"},
    tags=["graveler-tests"],
):
    create = GravelerCreateBranchOperator(task_id="create", repository=REPO, branch="ops")

    @task
    def stage() -> None:
        p = get_current_context()["params"]
        with GravelerHook() as hook:
            repo = hook.get_repository(p["repository"])
            repo.put("ops", "ops/a.csv", b"a\n")
            repo.put("ops", "shared.csv", b"from ops\n")

    commit = GravelerCommitOperator(
        task_id="commit",
        repository=REPO,
        branch="ops",
        message="ops run {{ run_id }}",
        metadata={"source": "{{ dag.dag_id }}"},
    )
    merge = GravelerMergeOperator(
        task_id="merge",
        repository=REPO,
        source_ref="ops",
        destination_branch="main",
        strategy="source-wins",
    )
    tag = GravelerTagOperator(
        task_id="tag", repository=REPO, tag="release-1", ref="{{ ti.xcom_pull('merge') }}"
    )
    revert = GravelerRevertOperator(
        task_id="revert",
        repository=REPO,
        branch="main",
        ref="{{ ti.xcom_pull('merge') }}",
        parent_number=1,
    )
    delete = GravelerDeleteBranchOperator(task_id="delete", repository=REPO, branch="ops")
    create >> stage() >> commit >> merge >> tag >> revert >> delete


with DAG(
    "graveler_test_downstream",
    schedule=[graveler_asset(ASSET_REPO, "main", "tables/daily")],
    params={"repository": ASSET_REPO},
    tags=["graveler-tests"],
):

    @task
    def consume() -> None:
        """Scheduled by data landing in main under tables/daily."""

    consume()
