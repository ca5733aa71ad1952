"""The Repository facade: refs, branches, tags, objects and versioning of one repository.

A thin class over the parts the client hands it (:class:`graveler.context.RepositoryParts`):
every method is a function of :mod:`graveler.branches`, :mod:`graveler.reads`,
:mod:`graveler.writes` or :mod:`graveler.operations`, bound here so that users write
``repo.commit("main", "msg")``. Those modules take the narrow
:class:`graveler.context.RepoContext` protocol, which this class satisfies.
"""

from __future__ import annotations

import builtins
from contextlib import AbstractContextManager
from typing import Any

from graveler import (
    branches,
    cherrypick,
    hardreset,
    imports,
    operations,
    reads,
    staged,
    uploads,
    writes,
)
from graveler.committed.manager import CommittedManager
from graveler.config import ClientSettings
from graveler.context import HookDispatch, RepositoryParts
from graveler.errors import InvalidArgument
from graveler.external import ExternalStores
from graveler.hookevents import HookRun
from graveler.log import log_commits
from graveler.model import Commit, ResolvedRef
from graveler.model import Repository as RepositoryInfo
from graveler.multipart import Multipart
from graveler.objectstore.port import ObjectStore
from graveler.refs.port import RefStore, StagingStore
from graveler.resolve import resolve
from graveler.tables.diff import diff_tables
from graveler.transaction import Transaction, transaction
from graveler.views import ReadCache, ReadView
from graveler.writes import EntryAttributes

__all__ = ["EntryAttributes", "Repository"]


class Repository:
    """One repository. Obtain it from :meth:`graveler.Graveler.repository` or
    :meth:`graveler.Graveler.create_repository`."""

    def __init__(self, info: RepositoryInfo, parts: RepositoryParts) -> None:
        self.info = info
        self.parts = parts
        # Plain attributes: read on every call of the hot paths.
        self.name = info.name
        #: Views of refs and decoded entries, shared by the client's repositories.
        self.read_cache: ReadCache = parts.reads

    def __repr__(self) -> str:
        return f"Repository({self.name!r}, namespace={self.info.storage_namespace!r})"

    @property
    def refs(self) -> RefStore:
        return self.parts.refs

    @property
    def staging(self) -> StagingStore:
        return self.parts.staging

    @property
    def store(self) -> ObjectStore:
        return self.parts.store

    @property
    def committed(self) -> CommittedManager:
        return self.parts.committed

    @property
    def hooks(self) -> HookDispatch:
        """Runs this repository's hooks (the client's and its action files)."""
        return self.parts.hooks

    @property
    def external(self) -> ExternalStores:
        """The stores of imported objects outside the namespace."""
        return self.parts.external

    @property
    def multipart(self) -> Multipart:
        """Multipart uploads to this repository (:mod:`graveler.multipart`)."""
        if self.parts.uploads is None:
            raise InvalidArgument("this repository handle was opened without an upload store")
        return Multipart(self, self.parts.uploads)

    @property
    def settings(self) -> ClientSettings:
        """The settings of the client this handle came from."""
        return self.parts.settings

    # --- refs -----------------------------------------------------------------------------------

    def get_commit(self, commit_id: str) -> Commit:
        """A commit by full ID. Commits are immutable and content-addressed, so they are
        cached (per client) after the first read. Raises CommitNotFound."""
        key = (self.name, commit_id)
        cached = self.parts.commits.get(key)
        if cached is None:
            cached = self.refs.get_commit(self.name, commit_id)
            self.parts.commits.put(key, cached)
        return cached

    def resolve(self, ref: str, *, branches: bool = True) -> ResolvedRef:
        """Resolve a ref expression (branch, tag, commit ID or prefix, then ~N / ^N);
        ``branches=False`` when its base is known not to be a branch (one lookup fewer)."""
        return resolve(self, ref, branches=branches)

    def view(self, ref: str) -> ReadView:
        """What a read at ``ref`` sees: its commit, and for a branch name the staged entries
        over it, as of now (see :mod:`graveler.views`)."""
        return self.parts.reads.view(self, ref)

    log = log_commits

    # --- branches and tags ----------------------------------------------------------------------

    create_branch = branches.create_branch
    branch = branches.get_branch
    branch_exists = branches.branch_exists
    writable_branch = branches.writable_branch
    list_branches = branches.list_branches
    delete_branch = branches.delete_branch
    protect_branch = branches.protect_branch
    create_tag = branches.create_tag
    tag = branches.get_tag
    list_tags = branches.list_tags
    delete_tag = branches.delete_tag

    # --- objects --------------------------------------------------------------------------------

    put = writes.put
    upload_many = uploads.upload_many
    link = writes.link
    make_linked_entry = writes.make_linked_entry
    stage_entries = writes.stage_entries
    delete = writes.delete
    delete_many = writes.delete_many
    stat = reads.stat
    stat_many = reads.stat_many
    exists = reads.exists
    open = reads.open_object
    get = reads.get
    read_entry = reads.read_entry
    open_entry = reads.open_entry
    physical_uri = reads.physical_uri
    iter_objects = reads.iter_objects
    list = reads.list_objects
    stat_staged = staged.stat_staged
    get_staged = staged.get_staged
    iter_staged = staged.iter_staged
    list_staged = staged.list_staged

    # --- versioning -----------------------------------------------------------------------------

    commit = operations.commit
    merge = operations.merge
    revert = cherrypick.revert
    cherry_pick = cherrypick.cherry_pick
    reset = operations.reset
    reset_hard = hardreset.reset_hard
    diff = operations.diff_refs
    diff_uncommitted = operations.diff_uncommitted
    #: How each table (Delta Lake...) differs between two refs: graveler.tables.diff
    diff_tables = diff_tables
    import_entries = operations.import_entries
    import_data = imports.import_data

    def hook_runs(
        self,
        *,
        branch: str | None = None,
        commit_id: str | None = None,
        after: str | None = None,
        amount: int = 100,
    ) -> builtins.list[HookRun]:
        """Recorded hook runs, newest first, optionally of one branch or commit (the commit
        the event made or acted on); ``after`` (a run ID) pages on."""
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 1:
            raise InvalidArgument("amount must be a positive integer")
        return self.parts.hooks.runs.list_hook_runs(
            self.name, branch=branch, commit_id=commit_id, after=after, amount=amount
        )

    def hook_run(self, run_id: str) -> HookRun:
        """One recorded hook run; raises NotFound."""
        return self.parts.hooks.runs.get_hook_run(self.name, run_id)

    def transaction(
        self, base: str | None = None, **kwargs: Any
    ) -> AbstractContextManager[Transaction]:
        """``with repo.transaction("main") as tx:``: writes on an ephemeral branch, merged
        into ``base`` when the block succeeds (see :mod:`graveler.transaction`)."""
        return transaction(self, base or self.info.default_branch, **kwargs)
