"""Sensors: publish run branches on success, keep (or drop) them on failure, watch for commits.

All of them get graveler through the resource bound under the key ``"graveler"``
(:data:`RESOURCE_KEY`), as :func:`graveler_dagster.graveler_definitions` binds it, and all
default to ``DefaultSensorStatus.RUNNING`` (the daemon evaluates them as soon as the code
location loads). The run-status sensors monitor every code location by default
(``monitor_all_code_locations=True``): a run launched outside the webserver, such as
``dagster asset materialize -f defs.py`` against the instance, has no code-location origin
and would otherwise never be published. ``minimum_interval_seconds`` sets how often each
sensor may tick (the daemon checks about every 5 s).

* :func:`build_graveler_merge_sensor`: a run-status sensor on SUCCESS. It publishes the run
  (:func:`graveler_dagster.runs.publish_run`: one merge commit carrying the run's identity,
  exactly once per run, the branch deleted). A refused merge (a conflict, possible only with
  ``strategy=None``, or a target with uncommitted changes) keeps the branch, tags the run
  ``graveler/merge: failed`` and skips with the reason: retrying would not help, and failing
  the tick would hold back the merges of later runs.
* :func:`build_graveler_failure_sensor`: a run-failure sensor. It keeps the branch for
  inspection (tagging the run with it), or deletes it with ``delete_branch=True``, and
  restates in Dagster the assets the run materialized as the versions the target still
  holds (:func:`graveler_dagster.lineage.restate`), so Dagster's latest materialization
  never names data that was not published.
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
from graveler_dagster import lineage
from graveler_dagster.inputs import TAG_COMMIT, TAG_REF, TAG_REPOSITORY
from graveler_dagster.resource import GravelerResource
from graveler_dagster.runs import (
    REFUSED,
    TAG_BRANCH,
    TAG_MERGE,
    TAG_MERGE_COMMIT,
    discard_run_branch,
    publish_run,
)
from graveler_dagster.watch import new_commits, touches

if TYPE_CHECKING:  # jobs, asset jobs and graphs: what @sensor(job=...) accepts
    from dagster._core.definitions.target import ExecutableDefinition

RESOURCE_KEY = "graveler"
__all__ = [
    "RESOURCE_KEY",
    "TAG_BRANCH",
    "TAG_COMMIT",
    "TAG_MERGE",
    "TAG_MERGE_COMMIT",
    "TAG_REF",
    "TAG_REPOSITORY",
    "build_graveler_diff_sensor",
    "build_graveler_failure_sensor",
    "build_graveler_merge_sensor",
]
#: How often the merge and failure sensors may tick, by default.
DEFAULT_INTERVAL_SECONDS = 30


def build_graveler_merge_sensor(
    *,
    name: str = "graveler_merge_on_success",
    strategy: str | None = "source-wins",
    table_strategy: str | None = None,
    default_status: DefaultSensorStatus = DefaultSensorStatus.RUNNING,
    monitor_all_code_locations: bool = True,
    minimum_interval_seconds: int = DEFAULT_INTERVAL_SECONDS,
) -> SensorDefinition:
    """Publish each successful run's branch into the target branch, exactly once.

    ``strategy`` settles keys changed both by the run and on the target since the run started:
    "source-wins" (default: the run's materialization is the newest), "dest-wins", or None to
    refuse (the branch is then kept and the run tagged). A table (Delta Lake) both changed
    merges by its format's rules; ``table_strategy`` settles it when they refuse (default
    None: refused, with the TableConflict in the sensor's log and skip reason)."""

    @run_status_sensor(
        run_status=DagsterRunStatus.SUCCESS,
        name=name,
        default_status=default_status,
        monitor_all_code_locations=monitor_all_code_locations,
        minimum_interval_seconds=minimum_interval_seconds,
        description="Merges the graveler branch of each successful run into the target branch.",
    )
    def _merge(context: RunStatusSensorContext, graveler: GravelerResource) -> SkipReason | None:
        run = context.dagster_run
        repo = graveler.get_repository()
        try:
            pub = publish_run(graveler, repo, context.instance, run, strategy, table_strategy)
        except REFUSED as exc:
            branch = graveler.run_branch_name(run.run_id)
            context.log.error(f"graveler: run {run.run_id} not merged, branch {branch} kept: {exc}")
            return SkipReason(f"run {run.run_id} not merged, branch {branch} kept: {exc}")
        if pub.merge is None:
            return SkipReason(f"run {run.run_id} has no graveler writes (nothing to merge)")
        target, head = graveler.target(repo), pub.merge.commit.id
        if pub.replayed:
            return SkipReason(f"run {run.run_id} was already merged into {target} ({head})")
        context.log.info(f"graveler: merged run {run.run_id} into {target} ({head})")
        return None

    return _merge


def build_graveler_failure_sensor(
    *,
    name: str = "graveler_on_failure",
    delete_branch: bool = False,
    default_status: DefaultSensorStatus = DefaultSensorStatus.RUNNING,
    monitor_all_code_locations: bool = True,
    minimum_interval_seconds: int = DEFAULT_INTERVAL_SECONDS,
) -> SensorDefinition:
    """Keep a failed run's branch for inspection (tagging the run with its name), or delete
    it; restate what the run materialized as the target's versions."""

    @run_failure_sensor(
        name=name,
        default_status=default_status,
        monitor_all_code_locations=monitor_all_code_locations,
        minimum_interval_seconds=minimum_interval_seconds,
        description="Keeps (or deletes) the graveler branch of each failed run.",
    )
    def _failed(context: RunFailureSensorContext, graveler: GravelerResource) -> SkipReason | None:
        run_id = context.dagster_run.run_id
        repo = graveler.get_repository()
        target, ui = graveler.target(repo), graveler.graveler_ui_url
        lineage.restate(context.instance, repo, target, [run_id], ui_base=ui)
        branch = graveler.run_branch_name(run_id)
        if delete_branch:
            if discard_run_branch(graveler, repo, run_id):
                context.instance.add_run_tags(run_id, {TAG_MERGE: "discarded"})
            return None
        if not repo.branch_exists(branch):
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
    minimum_interval_seconds: int = DEFAULT_INTERVAL_SECONDS,
    default_status: DefaultSensorStatus = DefaultSensorStatus.RUNNING,
    max_commits: int = 1000,
) -> SensorDefinition:
    """A sensor requesting one run of ``job`` per new commit on ``repo``/``branch`` that touches
    ``prefix`` ("" for any path). Requests carry ``run_key`` = commit ID and the tags
    ``graveler/repository``, ``graveler/ref`` and ``graveler/commit``. The cursor is the last
    commit seen; the first tick records the head without requesting a run, so a sensor that
    starts RUNNING (the default) never requests runs for history. More than ``max_commits``
    new commits in one tick count as one change. The GravelerIOManager reads inputs of such a
    run at the commit that triggered it (see :mod:`graveler_dagster.inputs`)."""

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
