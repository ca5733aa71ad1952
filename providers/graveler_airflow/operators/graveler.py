"""Operators for branches, commits, merges, tags and reverts. Every argument is templated.

Each operator opens a :class:`~graveler_airflow.hooks.graveler.GravelerHook` for the duration
of ``execute`` and returns IDs (commit IDs), never objects, so downstream tasks receive them
through XCom. Commits and merges record the run (DAG id, run id, task id, try, link back to
the task instance) in their metadata, see :mod:`graveler_airflow.lineage`. Graveler failures
surface as typed :class:`graveler.errors.GravelerError` subclasses and fail the task.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

from graveler import MergeOptions, runs
from graveler.errors import AlreadyExists, BranchNotFound, NoChanges, TagNotFound
from graveler_airflow.assets.graveler import DEFAULT_LIMIT, asset_uri
from graveler_airflow.events import EventOptions, emit_merge_events, merge_alias
from graveler_airflow.hooks.graveler import GravelerHook
from graveler_airflow.lineage import with_run_metadata

if TYPE_CHECKING:
    from airflow.sdk import Context

    from graveler import MergeResult, Repository

log = logging.getLogger(__name__)


class GravelerBaseOperator(BaseOperator):
    """Opens the connection's client around :meth:`run`; subclasses implement ``run``."""

    template_fields: Sequence[str] = ("repository",)
    ui_color = "#d9ead3"

    def __init__(
        self,
        *,
        repository: str,
        graveler_conn_id: str = GravelerHook.default_conn_name,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.repository = repository
        self.graveler_conn_id = graveler_conn_id

    def execute(self, context: Context) -> Any:
        with GravelerHook(self.graveler_conn_id) as hook:
            return self.run(hook.get_repository(self.repository), context)

    def run(self, repo: Repository, context: Context) -> Any:
        raise NotImplementedError


class GravelerCreateBranchOperator(GravelerBaseOperator):
    """Create ``branch`` from ``source`` (a ref expression); returns the branch's commit ID.

    With ``exist_ok`` an existing branch is left as it is (useful when a task is retried)."""

    template_fields: Sequence[str] = (*GravelerBaseOperator.template_fields, "branch", "source")

    def __init__(
        self, *, branch: str, source: str = "main", exist_ok: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.branch = branch
        self.source = source
        self.exist_ok = exist_ok

    def run(self, repo: Repository, context: Context) -> str:
        try:
            created = repo.create_branch(self.branch, self.source)
        except AlreadyExists:
            if not self.exist_ok:
                raise
            self.log.info("Branch %s already exists in %s; keeping it", self.branch, repo.name)
            return repo.branch(self.branch).commit_id
        self.log.info("Created %s from %s at %s", self.branch, self.source, created.commit_id)
        return created.commit_id


class GravelerCommitOperator(GravelerBaseOperator):
    """Commit the staged changes of ``branch``; returns the new commit ID.

    The commit's metadata is ``metadata`` plus the run lineage. Without ``allow_empty`` a branch
    with nothing staged fails with :class:`graveler.errors.NoChanges`."""

    template_fields: Sequence[str] = (
        *GravelerBaseOperator.template_fields,
        "branch",
        "message",
        "metadata",
    )

    def __init__(
        self,
        *,
        branch: str,
        message: str,
        metadata: Mapping[str, Any] | None = None,
        allow_empty: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.branch = branch
        self.message = message
        self.metadata = metadata
        self.allow_empty = allow_empty

    def run(self, repo: Repository, context: Context) -> str:
        commit = repo.commit(
            self.branch,
            self.message,
            metadata=with_run_metadata(context, self.metadata),
            committer=self.owner,
            allow_empty=self.allow_empty,
        )
        self.log.info("Committed %s on %s", commit.id, self.branch)
        return commit.id


class GravelerMergeOperator(GravelerBaseOperator):
    """Merge ``source_ref`` into ``destination_branch``; returns the destination's new head.

    ``strategy`` is None (conflicts fail with :class:`graveler.errors.MergeConflict`),
    ``"dest-wins"`` or ``"source-wins"``. By default a merge commit is always made
    (``fast_forward=False``) so that it carries the run lineage. lakectl's other merge options
    are here too (:mod:`graveler.versioning.merge`): ``ff_only`` (merge only by fast-forward, which
    it then allows; a destination that moved fails with NotFastForward), ``squash`` (one commit
    whose only parent is the destination's head) and ``allow_empty`` (a merge commit even
    for a source already merged). A source already merged is otherwise not an error: the
    destination's current head is returned, so a retried task succeeds.
    (For a branch per DAG run, merged exactly once, use
    :class:`~graveler_airflow.run_branch.GravelerRunBranch`.)

    Asset events follow :mod:`graveler_airflow.events`: declared ``graveler://`` outlets get
    the merge's extra; with ``emit_asset_events`` (default) the other changed assets Airflow
    knows get events through the task's alias (``asset_paths`` instead of the changed tables),
    and the task runs one instance at a time across DAG runs.
    """

    template_fields: Sequence[str] = (
        *GravelerBaseOperator.template_fields,
        "source_ref",
        "destination_branch",
        "strategy",
        "message",
        "metadata",
        "asset_paths",
    )

    def __init__(
        self,
        *,
        source_ref: str,
        destination_branch: str = "main",
        strategy: str | None = None,
        message: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        fast_forward: bool | None = None,
        ff_only: bool = False,
        squash: bool = False,
        allow_empty: bool = False,
        emit_asset_events: bool = True,
        asset_paths: Sequence[str] | None = None,
        max_asset_events: int = DEFAULT_LIMIT,
        **kwargs: Any,
    ) -> None:
        if emit_asset_events:
            kwargs.setdefault("max_active_tis_per_dag", 1)
        super().__init__(**kwargs)
        # Airflow only accepts events through outlets declared on the task, at parse time.
        self.alias = merge_alias(self.dag_id, self.task_id) if emit_asset_events else None
        if self.alias is not None:
            self.outlets = [*self.outlets, self.alias]
        self.source_ref = source_ref
        self.destination_branch = destination_branch
        self.strategy = strategy
        self.message = message
        self.metadata = metadata
        ff = ff_only if fast_forward is None else fast_forward
        self.merge_options = MergeOptions(ff, ff_only, squash, allow_empty)  # checked at parse
        self.fast_forward = ff
        self.asset_paths = asset_paths
        self.max_asset_events = max_asset_events

    def run(self, repo: Repository, context: Context) -> str:
        asset_uri(repo.name, self.destination_branch)  # a branch no asset URI can name fails first
        merged = merge_with_lineage(
            repo,
            context,
            source=self.source_ref,
            dest=self.destination_branch,
            strategy=self.strategy,
            message=self.message,
            metadata=self.metadata,
            committer=self.owner,
            options=self.merge_options,
        )
        if merged is None:
            return repo.branch(self.destination_branch).commit_id
        options = EventOptions(self.alias, self.asset_paths, self.max_asset_events)
        emit_merge_events(context, self, repo, self.destination_branch, merged, options)
        return merged.commit.id


class GravelerDeleteBranchOperator(GravelerBaseOperator):
    """Delete ``branch`` and its uncommitted changes (its commits stay reachable by ID)."""

    template_fields: Sequence[str] = (*GravelerBaseOperator.template_fields, "branch")

    def __init__(self, *, branch: str, missing_ok: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.branch = branch
        self.missing_ok = missing_ok

    def run(self, repo: Repository, context: Context) -> None:
        try:
            repo.delete_branch(self.branch)
        except BranchNotFound:
            if not self.missing_ok:
                raise
            self.log.info("Branch %s does not exist in %s", self.branch, repo.name)


class GravelerTagOperator(GravelerBaseOperator):
    """Tag the commit ``ref`` resolves to; returns the tagged commit ID.

    With ``exist_ok`` an existing tag on that same commit is accepted (retries); a tag on
    another commit always fails with :class:`graveler.errors.AlreadyExists`."""

    template_fields: Sequence[str] = (*GravelerBaseOperator.template_fields, "tag", "ref")

    def __init__(self, *, tag: str, ref: str, exist_ok: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tag = tag
        self.ref = ref
        self.exist_ok = exist_ok

    def run(self, repo: Repository, context: Context) -> str:
        target = repo.resolve(self.ref).commit.id
        try:
            return repo.create_tag(self.tag, target).commit_id
        except AlreadyExists:
            if self.exist_ok and _tag_commit(repo, self.tag) == target:
                return target
            raise


class GravelerRevertOperator(GravelerBaseOperator):
    """Commit on ``branch`` the inverse of the changes ``ref`` introduced; returns the new
    commit ID. Reverting a merge commit needs ``parent_number`` (1 or 2)."""

    template_fields: Sequence[str] = (*GravelerBaseOperator.template_fields, "branch", "ref")

    def __init__(
        self, *, branch: str, ref: str, parent_number: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.branch = branch
        self.ref = ref
        self.parent_number = parent_number

    def run(self, repo: Repository, context: Context) -> str:
        commit = repo.revert(
            self.branch, self.ref, parent_number=self.parent_number, committer=self.owner
        )
        self.log.info("Reverted %s on %s with %s", self.ref, self.branch, commit.id)
        return commit.id


class GravelerPruneBranchesOperator(GravelerBaseOperator):
    """Delete the run branches (names starting with ``prefix``, default ``airflow-``) nobody
    created or committed to for longer than ``older_than`` (``"7d"``, ``"12h"``, seconds or a
    timedelta): the branches failed runs keep for inspection. Returns the names deleted (with
    ``dry_run``: those it would delete). Same rules as ``graveler branch prune``
    (:func:`graveler.runs.prune`): the default branch and protected branches are never
    deleted."""

    template_fields: Sequence[str] = (*GravelerBaseOperator.template_fields, "older_than", "prefix")

    def __init__(
        self,
        *,
        older_than: str | int | timedelta,
        prefix: str = "airflow-",
        dry_run: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.older_than = older_than
        self.prefix = prefix
        self.list_only = dry_run  # BaseOperator.dry_run is a method

    def run(self, repo: Repository, context: Context) -> list[str]:
        age = runs.parse_age(self.older_than)
        found = runs.prune(repo, prefix=self.prefix, older_than=age, dry_run=self.list_only)
        verb = "Would delete" if self.list_only else "Deleted"
        for branch in found:
            self.log.info(
                "%s %s (head %s, idle since %s)",
                verb,
                branch.name,
                branch.commit_id,
                branch.idle_since,
            )
        self.log.info("%s %d branches of %s idle for over %s", verb, len(found), repo.name, age)
        return [b.name for b in found]


def merge_with_lineage(
    repo: Repository,
    context: Context,
    *,
    source: str,
    dest: str,
    strategy: str | None,
    message: str | None,
    metadata: Mapping[str, Any] | None,
    committer: str,
    options: MergeOptions,
) -> MergeResult | None:
    """Merge with the run lineage in the merge commit; None when ``source`` is already merged
    (and ``options`` do not allow an empty merge)."""
    try:
        return repo.merge(
            source,
            dest,
            strategy=strategy,
            message=message,
            metadata=with_run_metadata(context, metadata),
            committer=committer,
            fast_forward=options.fast_forward,
            ff_only=options.ff_only,
            squash=options.squash,
            allow_empty=options.allow_empty,
        )
    except NoChanges as exc:
        log.info("Nothing to merge: %s", exc)
        return None


def _tag_commit(repo: Repository, tag: str) -> str | None:
    try:
        return repo.tag(tag).commit_id
    except TagNotFound:
        return None
