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
from typing import TYPE_CHECKING, Any

from airflow.sdk import AssetAlias, BaseOperator

from graveler.errors import AlreadyExists, BranchNotFound, NoChanges, TagNotFound
from graveler_airflow.assets.graveler import (
    DEFAULT_LIMIT,
    asset_from_uri,
    asset_uri,
    merge_changes,
)
from graveler_airflow.hooks.graveler import GravelerHook
from graveler_airflow.lineage import with_run_metadata

if TYPE_CHECKING:
    from airflow.sdk import Context

    from graveler import MergeResult, Repository

log = logging.getLogger(__name__)


def merge_alias(repository: str, branch: str) -> AssetAlias:
    """The asset alias through which merges into ``branch`` emit their asset events."""
    return AssetAlias(name=f"graveler-merges:{repository}/{branch}")


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
    (``fast_forward=False``) so that it carries the run lineage. A source already merged is
    not an error: the destination's current head is returned, so a retried task succeeds.

    The merge emits asset events through the alias :func:`merge_alias` for the merged paths
    (see :mod:`graveler_airflow.assets.graveler`); ``asset_paths`` restricts them to the given
    paths, ``emit_asset_events=False`` turns them off.
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
        repository: str,
        source_ref: str,
        destination_branch: str = "main",
        strategy: str | None = None,
        message: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        fast_forward: bool = False,
        emit_asset_events: bool = True,
        asset_paths: Sequence[str] | None = None,
        max_asset_events: int = DEFAULT_LIMIT,
        **kwargs: Any,
    ) -> None:
        # The alias is named at parse time (from the unrendered arguments): Airflow only
        # accepts events through outlets declared on the task.
        self.asset_alias = merge_alias(repository, destination_branch)
        outlets = list(kwargs.pop("outlets", None) or [])
        if emit_asset_events:
            outlets.append(self.asset_alias)
        super().__init__(repository=repository, outlets=outlets, **kwargs)
        self.source_ref = source_ref
        self.destination_branch = destination_branch
        self.strategy = strategy
        self.message = message
        self.metadata = metadata
        self.fast_forward = fast_forward
        self.emit_asset_events = emit_asset_events
        self.asset_paths = asset_paths
        self.max_asset_events = max_asset_events

    def run(self, repo: Repository, context: Context) -> str:
        if self.emit_asset_events:  # a branch no asset URI can name fails before the merge
            asset_uri(repo.name, self.destination_branch)
        merged = merge_with_lineage(
            repo,
            context,
            source=self.source_ref,
            dest=self.destination_branch,
            strategy=self.strategy,
            message=self.message,
            metadata=self.metadata,
            committer=self.owner,
            fast_forward=self.fast_forward,
        )
        if merged is None:
            return repo.branch(self.destination_branch).commit_id
        if self.emit_asset_events:
            emit_merge_events(
                context,
                repo,
                self.destination_branch,
                merged,
                alias=self.asset_alias,
                paths=self.asset_paths,
                limit=self.max_asset_events,
            )
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
    fast_forward: bool,
) -> MergeResult | None:
    """Merge with the run lineage in the merge commit; None when ``source`` is already merged."""
    try:
        return repo.merge(
            source,
            dest,
            strategy=strategy,
            message=message,
            metadata=with_run_metadata(context, metadata),
            committer=committer,
            fast_forward=fast_forward,
        )
    except NoChanges as exc:
        log.info("Nothing to merge: %s", exc)
        return None


def emit_merge_events(
    context: Context,
    repo: Repository,
    dest: str,
    merged: MergeResult,
    *,
    alias: AssetAlias,
    paths: Sequence[str] | None,
    limit: int,
) -> int:
    """Record asset events for what ``merged`` changed on ``dest``; returns how many."""
    changes = merge_changes(
        repo, dest, merged.before.id, merged.commit.id, paths=paths, limit=limit
    )
    events = context["outlet_events"][alias]
    for change in changes:
        events.add(asset_from_uri(change.uri), extra=change.extra)
    return len(changes)


def _tag_commit(repo: Repository, tag: str) -> str | None:
    try:
        return repo.tag(tag).commit_id
    except TagNotFound:
        return None
