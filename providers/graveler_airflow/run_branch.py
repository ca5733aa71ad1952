"""A branch per DAG run, published into ``main`` exactly once when the run succeeds.

    with DAG("etl", schedule="@daily") as dag:
        with GravelerRunBranch("lake", outlets=[graveler_asset("lake", "main", "clean")]) as run:
            clean = spark_clean(run.branch)       # run.branch: the branch name, via XCom
            check = validate(run.branch)
            clean >> check

:class:`GravelerRunBranch` is a task group over the engine's run lifecycle
(:mod:`graveler.runs`); the run's identity is ``airflow/<dag id>/<run id>/<group id>``, the
same for every try and every clear of the run. When the group is closed it wires

* ``create_branch`` before every task of the group: opens the run's branch from ``source``
  (``main``), or reuses it on a retry, and returns its name (XCom ``return_value``; the base
  commit ID is pushed as ``base_commit_id``);
* ``merge`` after every task of the group, with trigger rule ``none_failed``: publishes the
  run (commits what it staged, merges the branch into ``into`` with a merge commit carrying
  the run's identity and lineage, deletes the branch), then attaches asset events
  (:mod:`graveler_airflow.events`). Publishing is idempotent: a retried or cleared ``merge``,
  or a whole cleared run, finds its earlier merge commit in ``into`` and returns it instead of
  merging again (``publish_again=True`` merges anyway). lakectl's merge options shape the
  merge (``fast_forward``, ``ff_only``, ``squash``, ``allow_empty``: see
  :mod:`graveler.versioning.merge`). A merge conflict, or a target that moved under ``ff_only``,
  fails the task without retries (``AirflowFailException``), saying what happens to the branch;
* with ``delete_on_failure=True``, a ``discard`` teardown that deletes the branch of a run
  that did not publish.

When any task fails, ``merge`` does not run: ``into`` is untouched and the branch stays for
inspection (``graveler branch prune`` or :class:`~graveler_airflow.operators.graveler.
GravelerPruneBranchesOperator` removes such branches once they are old enough). Tasks in the
group read the name from ``run.branch`` (an XComArg) or ``run.branch_template`` (Jinja).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

from airflow.sdk import Asset, TaskGroup, TriggerRule, XComArg
from airflow.sdk.exceptions import AirflowFailException

from graveler import MergeOptions, MergeStrategy, Run, runs
from graveler.errors import MergeConflict, NotFastForward, TableConflict
from graveler_airflow.assets.graveler import DEFAULT_LIMIT, asset_uri
from graveler_airflow.events import EventOptions, emit_merge_events, merge_alias
from graveler_airflow.hooks.graveler import GravelerHook
from graveler_airflow.lineage import with_run_metadata
from graveler_airflow.links import GravelerRunBranchLink
from graveler_airflow.naming import DEFAULT_GROUP, run_branch_name
from graveler_airflow.operators.graveler import GravelerBaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context

    from graveler import Publication, Repository

__all__ = ["GravelerRunBranch", "run_branch_name", "run_started"]


def run_started(context: Context) -> datetime | None:
    """A time no later than the first attempt of the DAG run (its earliest recorded date):
    what bounds the search for an earlier publication. A clear resets ``start_date`` and
    ``queued_at``; ``run_after`` and the logical date stay."""
    dag_run = context.get("dag_run")
    dates = [getattr(dag_run, a, None) for a in ("run_after", "logical_date", "start_date")]
    found = [d for d in dates if isinstance(d, datetime)]
    return min(found) if found else None


class _RunBranchOperator(GravelerBaseOperator):
    template_fields: Sequence[str] = (*GravelerBaseOperator.template_fields, "source", "into")
    operator_extra_links = (GravelerRunBranchLink(),)

    def __init__(
        self, *, source: str, into: str, branch_prefix: str, group: str, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.source = source
        self.into = into
        self.branch_prefix = branch_prefix
        self.group = group

    def run_of(self, context: Context) -> Run:
        """The graveler run of this DAG run (and group)."""
        ti = context["ti"]
        name = run_branch_name(ti.dag_id, ti.run_id, self.branch_prefix, self.group)
        return Run(f"airflow/{ti.dag_id}/{ti.run_id}/{self.group}", name, self.into)


class CreateRunBranchOperator(_RunBranchOperator):
    """Open the run's branch (create it, or reuse it on a retry); returns its name."""

    def run(self, repo: Repository, context: Context) -> str:
        run = self.run_of(context)
        branch, created = runs.open_run(repo, run, self.source)
        verb = "created from " + self.source if created else "exists (a retry); reusing it"
        self.log.info("Run branch %s %s at %s", run.branch, verb, branch.commit_id)
        self.log.info("Inspect it with: graveler fs ls graveler://%s/%s/", repo.name, run.branch)
        context["ti"].xcom_push(key="base_commit_id", value=branch.commit_id)
        return run.branch


class MergeRunBranchOperator(_RunBranchOperator):
    """Publish the run into ``into`` (exactly once), then attach its asset events."""

    template_fields: Sequence[str] = (
        *_RunBranchOperator.template_fields,
        "asset_paths",
        "publish_again",
    )

    def __init__(
        self,
        *,
        strategy: str | None,
        delete_on_success: bool,
        delete_on_failure: bool,
        emit_asset_events: bool,
        asset_paths: Sequence[str] | None,
        max_asset_events: int,
        publish_again: bool | str,
        merge_options: MergeOptions | None = None,
        **kwargs: Any,
    ) -> None:
        if emit_asset_events:  # one merge at a time across runs: see graveler_airflow.events
            kwargs.setdefault("max_active_tis_per_dag", 1)
        super().__init__(**kwargs)
        self.strategy = strategy
        self.delete_on_success = delete_on_success
        self.delete_on_failure = delete_on_failure
        self.alias = merge_alias(self.dag_id, self.task_id) if emit_asset_events else None
        if self.alias is not None:
            self.outlets = [*self.outlets, self.alias]
        self.asset_paths = asset_paths
        self.max_asset_events = max_asset_events
        self.publish_again = publish_again
        self.merge_options = merge_options or MergeOptions(fast_forward=False)

    def run(self, repo: Repository, context: Context) -> str:
        run = self.run_of(context)
        asset_uri(repo.name, self.into)  # a branch no asset URI can name fails before merging
        existed = repo.branch_exists(run.branch)
        publication = self._publish(repo, run, context)
        if publication.merge is None and not existed:  # not published, and nothing left
            raise AirflowFailException(
                f"Run branch {run.branch!r} no longer exists and run {run.identity!r} was never "
                f"published into {run.into!r}: its writes were deleted (pruned or by hand)"
            )
        self._log_outcome(publication)
        if publication.merge is None:
            return repo.branch(self.into).commit_id
        options = EventOptions(self.alias, self.asset_paths, self.max_asset_events)
        extra = {"run": run.identity, "replayed": publication.replayed}
        emit_merge_events(context, self, repo, self.into, publication.merge, options, extra)
        return publication.merge.commit.id

    def _publish(self, repo: Repository, run: Run, context: Context) -> Publication:
        ti = context["ti"]
        try:
            return runs.publish(
                repo,
                run,
                f"Merge run {ti.run_id} of {ti.dag_id}",
                metadata=with_run_metadata(context, None),
                committer=self.owner,
                strategy=self.strategy,
                since=run_started(context),
                again=_truthy(self.publish_again),
                keep_branch=not self.delete_on_success,
                fast_forward=self.merge_options.fast_forward,
                ff_only=self.merge_options.ff_only,
                squash=self.merge_options.squash,
                allow_empty=self.merge_options.allow_empty,
            )
        except MergeConflict as exc:
            raise AirflowFailException(self._conflict(repo, run, exc)) from None
        except NotFastForward as exc:
            raise AirflowFailException(
                f"Run {run.identity!r} was not published into {self.into!r}: {exc}. "
                f"{self._fate(repo, run)}. The task is not retried."
            ) from None

    def _conflict(self, repo: Repository, run: Run, exc: MergeConflict) -> str:
        shown = ", ".join(exc.keys[:10]) + (" ..." if len(exc.keys) > 10 else "")
        table = ""
        if isinstance(exc, TableConflict):  # the table format's own reason
            table = f" ({exc.format} table {exc.table!r}: {exc.kind}: {exc.reason})"
        return (
            f"Merge conflict publishing run {run.identity!r} into {self.into!r} on "
            f"{len(exc.keys)} path(s): {shown}{table}. Nothing was published and "
            f"{self.into!r} is unchanged; {self._fate(repo, run)}. A conflict fails the same "
            "way on every try, so the task is not retried: resolve it, or set "
            "strategy='source-wins' or 'dest-wins'."
        )

    def _fate(self, repo: Repository, run: Run) -> str:
        """What happens to the branch of a run that was not published."""
        head = repo.branch(run.branch).commit_id
        if self.delete_on_failure:
            return (
                f"the discard teardown (delete_on_failure=True) deletes branch {run.branch!r}; "
                f"its writes stay readable as commit {head} until garbage collection"
            )
        return f"the run's writes are kept, committed as {head}, on branch {run.branch!r}"

    def _log_outcome(self, publication: Publication) -> None:
        run, merge = publication.run, publication.merge
        if publication.replayed and merge is not None:
            self.log.info(
                "Run %s was already published into %s as %s: nothing merged again",
                run.identity,
                run.into,
                merge.commit.id,
            )
            if publication.branch_kept:
                self.log.warning(
                    "This attempt wrote data that differs from what was published; it is kept "
                    "on branch %s (not merged: set publish_again=True to merge it too)",
                    run.branch,
                )
        elif merge is not None:
            self.log.info("Published run %s into %s as %s", run.identity, run.into, merge.commit.id)
        else:
            self.log.info("Run %s wrote nothing: nothing to publish", run.identity)


class DiscardRunBranchOperator(_RunBranchOperator):
    """Teardown: delete the run's branch unless ``merge`` succeeded."""

    def __init__(self, *, merge_task_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.merge_task_id = merge_task_id

    def run(self, repo: Repository, context: Context) -> None:
        if context["ti"].xcom_pull(task_ids=self.merge_task_id) is not None:
            return
        run = self.run_of(context)
        if runs.discard(repo, run):
            self.log.info("The run did not publish: deleted its branch %s", run.branch)


def _truthy(value: bool | str) -> bool:
    """A boolean option that may arrive as rendered template text."""
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


class GravelerRunBranch:
    """A task group giving each DAG run its own branch, published when all its tasks succeed.

    :param repository: repository name (templated).
    :param group_id: the task group's id; task ids are ``<group_id>.create_branch``, etc.
    :param source: the ref the run branch starts from (templated, default ``main``).
    :param into: the branch published into on success (templated, default: ``source``).
    :param strategy: merge strategy on conflicts: None (fail), ``dest-wins``, ``source-wins``.
    :param delete_on_success: delete the run branch after publishing (default True).
    :param delete_on_failure: delete the run branch of a run that did not publish (default
        False: it is kept for inspection).
    :param outlets: ``graveler://`` assets the run writes (see
        :mod:`graveler_airflow.events`): declared on ``merge``, each gets an event on success.
    :param emit_asset_events: also emit events, through the merge task's alias, for the other
        assets the merge changed that Airflow knows (default True).
    :param asset_paths: the paths to report instead of the changed tables (templated).
    :param max_asset_events: at most this many assets through the alias (default 50).
    :param publish_again: merge even if this run was already published (templated; default
        False: a cleared run is never merged twice).
    :param fast_forward: let an unchanged ``into`` simply move to the run's last commit
        (default: False, a merge commit carrying the run's identity and lineage; True with
        ``ff_only``).
    :param ff_only: publish only by fast-forward; a moved ``into`` fails the task.
    :param squash: publish as one commit whose only parent is ``into``'s head.
    :param allow_empty: make the merge commit even for a run that wrote nothing new.
    :param branch_prefix: first part of the run branch names (default ``airflow``).
    """

    def __init__(
        self,
        repository: str,
        *,
        group_id: str = DEFAULT_GROUP,
        graveler_conn_id: str = GravelerHook.default_conn_name,
        source: str = "main",
        into: str | None = None,
        strategy: str | None = None,
        delete_on_success: bool = True,
        delete_on_failure: bool = False,
        outlets: Sequence[Asset] = (),
        emit_asset_events: bool = True,
        asset_paths: Sequence[str] | None = None,
        max_asset_events: int = DEFAULT_LIMIT,
        publish_again: bool | str = False,
        branch_prefix: str = "airflow",
        fast_forward: bool | None = None,
        ff_only: bool = False,
        squash: bool = False,
        allow_empty: bool = False,
        **group_kwargs: Any,
    ) -> None:
        MergeStrategy.parse(strategy)  # a bad strategy fails at parse time, not after a run
        ff = ff_only if fast_forward is None else fast_forward
        options = MergeOptions(ff, ff_only, squash, allow_empty)  # so do contradictory options
        self.group = TaskGroup(group_id, **group_kwargs)
        common: dict[str, Any] = {
            "repository": repository,
            "graveler_conn_id": graveler_conn_id,
            "source": source,
            "into": into or source,
            "branch_prefix": branch_prefix,
            "group": self.group.group_id or "",
        }
        with self.group:
            self.create = CreateRunBranchOperator(task_id="create_branch", **common)
            self.merge = MergeRunBranchOperator(
                task_id="merge",
                trigger_rule=TriggerRule.NONE_FAILED,
                strategy=strategy,
                delete_on_success=delete_on_success,
                delete_on_failure=delete_on_failure,
                outlets=list(outlets),
                emit_asset_events=emit_asset_events,
                asset_paths=asset_paths,
                max_asset_events=max_asset_events,
                publish_again=publish_again,
                merge_options=options,
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
