"""Sensors: merge run branches on success, keep (or drop) them on failure, watch for commits.

All of them get graveler through the resource bound under the key ``"graveler"``
(:data:`RESOURCE_KEY`), as :func:`graveler_dagster.graveler_definitions` binds it.

* :func:`build_graveler_merge_sensor`: a run-status sensor on SUCCESS. It merges the run's
  branch into the target (one merge commit naming the run) and deletes the branch. A conflict
  (possible only with ``strategy=None``) or a target with uncommitted changes keeps the branch,
  tags the run ``graveler/merge: failed`` and skips with the reason: retrying would not help,
  and failing the tick would hold back the merges of later runs.
* :func:`build_graveler_failure_sensor`: a run-failure sensor. It keeps the branch for
  inspection (tagging the run with it), or deletes it with ``delete_branch=True``.
* :func:`build_graveler_diff_sensor`: requests one run per new commit on a branch that touches
  a prefix. Its cursor is the last commit seen; the first tick only records the head.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dagster import (
    DagsterRunStatus,
    DefaultSensorStatus,
    RunFailureSensorContext,
    RunRequest,
    RunStatusSensorContext,
    SensorDefinition,
    SensorEvaluationContext,
    SkipReason,
    run_failure_sensor,
    run_status_sensor,
    sensor,
)

from graveler import GravelerURI
from graveler.errors import BranchNotFound, Conflict
from graveler_dagster.resource import GravelerResource
from graveler_dagster.runs import discard_run_branch, merge_run_branch
from graveler_dagster.watch import new_commits, touches

if TYPE_CHECKING:  # jobs, asset jobs and graphs: what @sensor(job=...) accepts
    from dagster._core.definitions.target import ExecutableDefinition

RESOURCE_KEY = "graveler"
TAG_BRANCH = "graveler/branch"
TAG_MERGE = "graveler/merge"
TAG_COMMIT = "graveler/commit"
TAG_MERGE_COMMIT = "graveler/merge_commit"
TAG_REPOSITORY = "graveler/repository"
TAG_REF = "graveler/ref"


def build_graveler_merge_sensor(
    *,
    name: str = "graveler_merge_on_success",
    strategy: str | None = "source-wins",
    default_status: DefaultSensorStatus = DefaultSensorStatus.RUNNING,
    monitor_all_code_locations: bool = False,
) -> SensorDefinition:
    """Merge each successful run's branch into the target branch, then delete it.

    ``strategy`` settles keys changed both by the run and on the target since the run started:
    "source-wins" (default: the run's materialization is the newest), "dest-wins", or None to
    refuse (the branch is then kept and the run tagged)."""

    @run_status_sensor(
        run_status=DagsterRunStatus.SUCCESS,
        name=name,
        default_status=default_status,
        monitor_all_code_locations=monitor_all_code_locations,
        description="Merges the graveler branch of each successful run into the target branch.",
    )
    def _merge(context: RunStatusSensorContext, graveler: GravelerResource) -> SkipReason | None:
        run = context.dagster_run
        repo = graveler.get_repository()
        try:
            outcome = merge_run_branch(graveler, repo, run, strategy)
        except Conflict as exc:
            branch = graveler.run_branch_name(run.run_id)
            context.instance.add_run_tags(run.run_id, {TAG_MERGE: "failed", TAG_BRANCH: branch})
            context.log.error(f"graveler: run {run.run_id} not merged, branch {branch} kept: {exc}")
            return SkipReason(f"merge of {branch} failed, branch kept: {exc}")
        if not outcome.existed:
            return SkipReason(f"run {run.run_id} has no graveler branch (nothing to merge)")
        head = outcome.commit.id if outcome.commit else "unchanged"
        context.instance.add_run_tags(run.run_id, {TAG_MERGE: "merged", TAG_MERGE_COMMIT: head})
        context.log.info(f"graveler: merged {outcome.branch} into {graveler.target(repo)} ({head})")
        return None

    return _merge


def build_graveler_failure_sensor(
    *,
    name: str = "graveler_on_failure",
    delete_branch: bool = False,
    default_status: DefaultSensorStatus = DefaultSensorStatus.RUNNING,
    monitor_all_code_locations: bool = False,
) -> SensorDefinition:
    """Keep a failed run's branch for inspection (tagging the run with its name), or delete it."""

    @run_failure_sensor(
        name=name,
        default_status=default_status,
        monitor_all_code_locations=monitor_all_code_locations,
        description="Keeps (or deletes) the graveler branch of each failed run.",
    )
    def _failed(context: RunFailureSensorContext, graveler: GravelerResource) -> SkipReason | None:
        run_id = context.dagster_run.run_id
        repo = graveler.get_repository()
        branch = graveler.run_branch_name(run_id)
        if delete_branch:
            if discard_run_branch(graveler, repo, run_id):
                context.instance.add_run_tags(run_id, {TAG_MERGE: "discarded"})
            return None
        try:
            repo.branch(branch)
        except BranchNotFound:
            return SkipReason(f"run {run_id} has no graveler branch")
        context.instance.add_run_tags(run_id, {TAG_MERGE: "kept", TAG_BRANCH: branch})
        context.log.info(f"graveler: failed run's branch kept: {GravelerURI(repo.name, branch)}")
        return None

    return _failed


def build_graveler_diff_sensor(
    repo: str,
    branch: str,
    prefix: str,
    job: ExecutableDefinition,
    *,
    name: str | None = None,
    minimum_interval_seconds: int = 30,
    default_status: DefaultSensorStatus = DefaultSensorStatus.STOPPED,
    max_commits: int = 1000,
) -> SensorDefinition:
    """A sensor requesting one run of ``job`` per new commit on ``repo``/``branch`` that touches
    ``prefix`` ("" for any path). Requests carry ``run_key`` = commit ID and the tags
    ``graveler/repository``, ``graveler/ref`` and ``graveler/commit``. The cursor is the last
    commit seen; the first tick records the head without requesting a run. More than
    ``max_commits`` new commits in one tick count as one change."""

    @sensor(
        name=name or _sensor_name("graveler_diff", repo, branch, prefix),
        job=job,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=default_status,
        description=f"Runs {job.name} for commits on {GravelerURI(repo, branch)} under {prefix!r}.",
    )
    def _diff(
        context: SensorEvaluationContext, graveler: GravelerResource
    ) -> list[RunRequest] | SkipReason:
        handle = graveler.get_repository(repo)
        head = handle.resolve(branch).commit
        seen = context.cursor
        context.update_cursor(head.id)
        if seen is None:
            return SkipReason(f"watching {branch} from commit {head.id[:12]}")
        changes = [
            c for c in new_commits(handle, head, seen, max_commits) if touches(handle, c, prefix)
        ]
        if not changes:
            return SkipReason(f"no new commit on {branch} touches {prefix!r}")
        return [
            RunRequest(
                run_key=c.commit.id,
                tags={TAG_REPOSITORY: repo, TAG_REF: branch, TAG_COMMIT: c.commit.id},
            )
            for c in changes
        ]

    return _diff


def _sensor_name(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", "_".join(p for p in parts if p)).strip("_")
