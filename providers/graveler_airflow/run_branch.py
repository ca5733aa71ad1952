"""A branch per DAG run, merged into ``main`` when the run succeeds.

    with DAG("etl", schedule="@daily") as dag:
        with GravelerRunBranch("lake") as run:
            clean = spark_clean(run.branch)       # run.branch: the branch name, via XCom
            check = validate(run.branch)
            clean >> check

:class:`GravelerRunBranch` is a task group. When it is closed it wires

* ``create_branch`` before every task of the group: creates the run's branch from ``source``
  (``main``) and returns its name (XCom ``return_value``; the base commit ID is pushed as
  ``base_commit_id``);
* ``merge`` after every task of the group, with trigger rule ``none_failed``: commits what the
  run staged (with the run lineage in the commit metadata), merges the branch into ``into``
  (a merge commit carrying the lineage), emits ``graveler://`` asset events for the merged
  paths and deletes the branch (``delete_on_success``);
* with ``delete_on_failure=True``, a ``discard`` teardown that deletes the branch of a run that
  did not merge.

When any task fails, ``merge`` does not run: ``into`` is untouched and the branch stays for
inspection. A merge conflict fails ``merge`` and keeps the (committed) branch as well. The
branch name is a function of the DAG id and run id (:func:`run_branch_name`), so retries and
cleared runs find the same branch. Tasks in the group read the name from ``run.branch`` (an
XComArg for TaskFlow arguments and templated fields) or ``run.branch_template`` (a Jinja
expression for any templated string).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from airflow.sdk import AssetAlias, TaskGroup, TriggerRule, XComArg

from graveler import MergeStrategy
from graveler.errors import AlreadyExists, BranchNotFound, MergeConflict, NoChanges
from graveler_airflow.assets.graveler import DEFAULT_LIMIT, asset_uri
from graveler_airflow.hooks.graveler import GravelerHook
from graveler_airflow.lineage import with_run_metadata
from graveler_airflow.operators.graveler import (
    GravelerBaseOperator,
    emit_merge_events,
    merge_alias,
    merge_with_lineage,
)

if TYPE_CHECKING:
    from airflow.sdk import Context

    from graveler import Repository

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_SLUG = 180


def run_branch_name(dag_id: str, run_id: str, prefix: str = "airflow") -> str:
    """The branch of one DAG run: readable, valid as a graveler branch name, and unique per
    (DAG id, run id) thanks to a short hash of both."""
    digest = hashlib.sha256(f"{dag_id}\x00{run_id}".encode()).hexdigest()[:8]
    slug = _UNSAFE.sub("-", f"{prefix}-{dag_id}-{run_id}")
    slug = re.sub(r"\.{2,}", ".", slug).strip("-.")[:_MAX_SLUG]
    return f"{slug}-{digest}"


def _branch_of(context: Context, prefix: str) -> str:
    ti = context["ti"]
    return run_branch_name(ti.dag_id, ti.run_id, prefix)


class _RunBranchOperator(GravelerBaseOperator):
    template_fields: Sequence[str] = (*GravelerBaseOperator.template_fields, "source", "into")

    def __init__(self, *, source: str, into: str, branch_prefix: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source = source
        self.into = into
        self.branch_prefix = branch_prefix


class CreateRunBranchOperator(_RunBranchOperator):
    """Create (or, on a retry, reuse) the run's branch; returns its name."""

    def run(self, repo: Repository, context: Context) -> str:
        name = _branch_of(context, self.branch_prefix)
        try:
            branch = repo.create_branch(name, self.source)
            self.log.info(
                "Run branch %s created from %s at %s", name, self.source, branch.commit_id
            )
        except AlreadyExists:
            branch = repo.branch(name)
            self.log.info("Run branch %s exists (retry or cleared run); reusing it", name)
        context["ti"].xcom_push(key="base_commit_id", value=branch.commit_id)
        return name


class MergeRunBranchOperator(_RunBranchOperator):
    """Commit the run's branch, merge it into ``into``, emit asset events, delete it."""

    template_fields: Sequence[str] = (*_RunBranchOperator.template_fields, "asset_paths")

    def __init__(
        self,
        *,
        strategy: str | None,
        delete_on_success: bool,
        asset_alias: AssetAlias | None,
        asset_paths: Sequence[str] | None,
        max_asset_events: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(outlets=[asset_alias] if asset_alias else [], **kwargs)
        self.strategy = strategy
        self.delete_on_success = delete_on_success
        self.asset_alias = asset_alias
        self.asset_paths = asset_paths
        self.max_asset_events = max_asset_events

    def run(self, repo: Repository, context: Context) -> str:
        name = _branch_of(context, self.branch_prefix)
        ti = context["ti"]
        if self.asset_alias is not None:  # a branch no asset URI can name fails before merging
            asset_uri(repo.name, self.into)
        self._commit(repo, name, context)
        try:
            merged = merge_with_lineage(
                repo,
                context,
                source=name,
                dest=self.into,
                strategy=self.strategy,
                message=f"Merge run {ti.run_id} of {ti.dag_id}",
                metadata=None,
                committer=self.owner,
                fast_forward=False,
            )
        except MergeConflict as exc:
            exc.add_note(f"{self.into!r} is untouched; the run's writes are kept on {name!r}")
            raise
        if merged is not None and self.asset_alias is not None:
            emit_merge_events(
                context,
                repo,
                self.into,
                merged,
                alias=self.asset_alias,
                paths=self.asset_paths,
                limit=self.max_asset_events,
            )
        if self.delete_on_success:
            repo.delete_branch(name)
        return merged.commit.id if merged is not None else repo.branch(self.into).commit_id

    def _commit(self, repo: Repository, name: str, context: Context) -> None:
        ti = context["ti"]
        try:
            commit = repo.commit(
                name,
                f"Run {ti.run_id} of {ti.dag_id}",
                metadata=with_run_metadata(context, None),
                committer=self.owner,
            )
            self.log.info("Committed the run's changes as %s", commit.id)
        except NoChanges:
            self.log.info("Nothing staged on %s", name)


class DiscardRunBranchOperator(_RunBranchOperator):
    """Teardown: delete the run's branch unless ``merge`` succeeded."""

    def __init__(self, *, merge_task_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.merge_task_id = merge_task_id

    def run(self, repo: Repository, context: Context) -> None:
        if context["ti"].xcom_pull(task_ids=self.merge_task_id) is not None:
            return
        name = _branch_of(context, self.branch_prefix)
        try:
            repo.delete_branch(name)
            self.log.info("The run failed: deleted its branch %s", name)
        except BranchNotFound:
            pass


class GravelerRunBranch:
    """A task group giving each DAG run its own branch, merged when all its tasks succeed.

    :param repository: repository name (templated).
    :param group_id: the task group's id; task ids are ``<group_id>.create_branch``, etc.
    :param source: the ref the run branch starts from (templated, default ``main``).
    :param into: the branch merged into on success (templated, default: ``source``).
    :param strategy: merge strategy on conflicts: None (fail), ``dest-wins``, ``source-wins``.
    :param delete_on_success: delete the run branch after merging (default True).
    :param delete_on_failure: delete the run branch of a run that did not merge (default
        False: it is kept for inspection).
    :param emit_asset_events: as for
        :class:`~graveler_airflow.operators.graveler.GravelerMergeOperator`.
    :param asset_paths: as for ``GravelerMergeOperator``.
    :param max_asset_events: as for ``GravelerMergeOperator``.
    :param branch_prefix: first part of the run branch names (default ``airflow``).
    """

    def __init__(
        self,
        repository: str,
        *,
        group_id: str = "graveler_run",
        graveler_conn_id: str = GravelerHook.default_conn_name,
        source: str = "main",
        into: str | None = None,
        strategy: str | None = None,
        delete_on_success: bool = True,
        delete_on_failure: bool = False,
        emit_asset_events: bool = True,
        asset_paths: Sequence[str] | None = None,
        max_asset_events: int = DEFAULT_LIMIT,
        branch_prefix: str = "airflow",
        **group_kwargs: Any,
    ) -> None:
        MergeStrategy.parse(strategy)  # a bad strategy fails at parse time, not after a run
        into = into or source
        common: dict[str, Any] = {
            "repository": repository,
            "graveler_conn_id": graveler_conn_id,
            "source": source,
            "into": into,
            "branch_prefix": branch_prefix,
        }
        self.group = TaskGroup(group_id, **group_kwargs)
        with self.group:
            self.create = CreateRunBranchOperator(task_id="create_branch", **common)
            self.merge = MergeRunBranchOperator(
                task_id="merge",
                trigger_rule=TriggerRule.NONE_FAILED,
                strategy=strategy,
                delete_on_success=delete_on_success,
                asset_alias=merge_alias(repository, into) if emit_asset_events else None,
                asset_paths=asset_paths,
                max_asset_events=max_asset_events,
                **common,
            )
            self.discard = (
                DiscardRunBranchOperator(
                    task_id="discard", merge_task_id=self.merge.task_id, **common
                )
                if delete_on_failure
                else None
            )
        self._own = {t.task_id for t in (self.create, self.merge, self.discard) if t}

    @property
    def branch(self) -> XComArg:
        """The run branch's name, as an XComArg of ``create_branch``."""
        return self.create.output

    @property
    def branch_template(self) -> str:
        """A Jinja expression rendering to the run branch's name."""
        return "{{ ti.xcom_pull(task_ids='" + self.create.task_id + "') }}"

    def __enter__(self) -> GravelerRunBranch:
        self.group.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if exc_type is None:
                self._wire()
        finally:
            self.group.__exit__(exc_type, exc, tb)  # type: ignore[no-untyped-call]

    def _wire(self) -> None:
        members = [t for t in self.group if t.task_id not in self._own]
        ids = {t.task_id for t in members}
        for task in members:
            if (
                task.upstream_task_ids.isdisjoint(ids)
                and self.create.task_id not in task.upstream_task_ids
            ):
                self.create >> task
            if task.downstream_task_ids.isdisjoint(ids):
                task >> self.merge
        if not members:
            self.create >> self.merge
        if self.discard is not None:
            self.merge >> self.discard
            self.discard.as_teardown(setups=self.create)
