"""The Repository facade: refs, branches, tags, objects and versioning of one repository.

A thin class over the parts the client hands it (:class:`graveler.views.context.RepositoryParts`):
every method is a function of :mod:`graveler.versioning.branches`, :mod:`graveler.views.reads`,
:mod:`graveler.versioning.writes` or :mod:`graveler.versioning.commit`, bound here so that users
write ``repo.commit("main", "msg")``. Those modules take the narrow
:class:`graveler.views.context.RepoContext` protocol, which this class satisfies. A method's module
is imported the first time one of its methods is used (:data:`_METHODS`).
"""

from __future__ import annotations

import builtins
import importlib
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from graveler.core.errors import InvalidArgument
from graveler.views.resolve import resolve

if TYPE_CHECKING:
    from graveler.core.config import ClientSettings
    from graveler.core.hookevents import HookRun
    from graveler.core.model import Commit, ResolvedRef
    from graveler.core.model import Repository as RepositoryInfo
    from graveler.storage.committed.manager import CommittedManager
    from graveler.storage.external import ExternalStores
    from graveler.storage.objectstore.port import ObjectStore
    from graveler.storage.refs.port import RefStore, StagingStore
    from graveler.tables import diff as table_diff
    from graveler.versioning import branches, bulk_writes, cherrypick, imports, writes
    from graveler.versioning import commit as committing
    from graveler.versioning import merge as merging
    from graveler.versioning import reset as resets
    from graveler.versioning.multipart import Multipart
    from graveler.versioning.transaction import Transaction
    from graveler.versioning.writes import EntryAttributes
    from graveler.views import diff as diffs
    from graveler.views import reads, uncommitted
    from graveler.views.cache import ReadCache, ReadView
    from graveler.views.context import HookDispatch, RepositoryParts, TableMerges
    from graveler.views.log import log_commits

__all__ = ["EntryAttributes", "Repository"]


def __getattr__(name: str) -> Any:
    if (
        name == "EntryAttributes"
    ):  # re-exported from graveler.versioning.writes, imported on first use
        from graveler.versioning.writes import EntryAttributes

        return EntryAttributes
    raise AttributeError(f"module 'graveler.repository' has no attribute {name!r}")


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
    def table_merges(self) -> TableMerges | None:
        """How merges treat tables both sides changed (:mod:`graveler.tables.merge`)."""
        return self.parts.table_merges

    @property
    def multipart(self) -> Multipart:
        """Multipart uploads to this repository (:mod:`graveler.versioning.multipart`)."""
        from graveler.versioning.multipart import (
            Multipart,  # here: most handles never upload in parts
        )

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
        over it, as of now (see :mod:`graveler.views.cache`)."""
        return self.parts.reads.view(self, ref)

    # Engine functions bound as methods. Each module is imported on the first use of one of
    # its methods (see _METHODS below), so a command that only reads loads no writer, merger
    # or importer; these assignments say the same to type checkers and documentation.
    if TYPE_CHECKING:
        log = log_commits

        # --- branches and tags ---

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

        # --- objects ---

        put = writes.put
        upload_many = bulk_writes.upload_many
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
        stat_staged = uncommitted.stat_staged
        get_staged = uncommitted.get_staged
        iter_staged = uncommitted.iter_staged
        list_staged = uncommitted.list_staged

        # --- versioning ---

        commit = committing.commit
        merge = merging.merge
        revert = cherrypick.revert
        cherry_pick = cherrypick.cherry_pick
        reset = resets.reset
        reset_hard = resets.reset_hard
        diff = diffs.diff_refs
        diff_uncommitted = diffs.diff_uncommitted
        #: How each table (Delta Lake...) differs between two refs: graveler.tables.diff
        diff_tables = table_diff.diff_tables
        import_entries = committing.import_entries
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
        into ``base`` when the block succeeds (see :mod:`graveler.versioning.transaction`)."""
        from graveler.versioning.transaction import transaction

        return transaction(self, base or self.info.default_branch, **kwargs)


#: Repository method -> (module, function) of the engine function it binds.
_METHODS: dict[str, tuple[str, str]] = {
    "log": ("graveler.views.log", "log_commits"),
    "create_branch": ("graveler.versioning.branches", "create_branch"),
    "branch": ("graveler.versioning.branches", "get_branch"),
    "branch_exists": ("graveler.versioning.branches", "branch_exists"),
    "writable_branch": ("graveler.versioning.branches", "writable_branch"),
    "list_branches": ("graveler.versioning.branches", "list_branches"),
    "delete_branch": ("graveler.versioning.branches", "delete_branch"),
    "protect_branch": ("graveler.versioning.branches", "protect_branch"),
    "create_tag": ("graveler.versioning.branches", "create_tag"),
    "tag": ("graveler.versioning.branches", "get_tag"),
    "list_tags": ("graveler.versioning.branches", "list_tags"),
    "delete_tag": ("graveler.versioning.branches", "delete_tag"),
    "put": ("graveler.versioning.writes", "put"),
    "upload_many": ("graveler.versioning.bulk_writes", "upload_many"),
    "link": ("graveler.versioning.writes", "link"),
    "make_linked_entry": ("graveler.versioning.writes", "make_linked_entry"),
    "stage_entries": ("graveler.versioning.writes", "stage_entries"),
    "delete": ("graveler.versioning.writes", "delete"),
    "delete_many": ("graveler.versioning.writes", "delete_many"),
    "stat": ("graveler.views.reads", "stat"),
    "stat_many": ("graveler.views.reads", "stat_many"),
    "exists": ("graveler.views.reads", "exists"),
    "open": ("graveler.views.reads", "open_object"),
    "get": ("graveler.views.reads", "get"),
    "read_entry": ("graveler.views.reads", "read_entry"),
    "open_entry": ("graveler.views.reads", "open_entry"),
    "physical_uri": ("graveler.views.reads", "physical_uri"),
    "iter_objects": ("graveler.views.reads", "iter_objects"),
    "list": ("graveler.views.reads", "list_objects"),
    "stat_staged": ("graveler.views.uncommitted", "stat_staged"),
    "get_staged": ("graveler.views.uncommitted", "get_staged"),
    "iter_staged": ("graveler.views.uncommitted", "iter_staged"),
    "list_staged": ("graveler.views.uncommitted", "list_staged"),
    "commit": ("graveler.versioning.commit", "commit"),
    "merge": ("graveler.versioning.merge", "merge"),
    "revert": ("graveler.versioning.cherrypick", "revert"),
    "cherry_pick": ("graveler.versioning.cherrypick", "cherry_pick"),
    "reset": ("graveler.versioning.reset", "reset"),
    "reset_hard": ("graveler.versioning.reset", "reset_hard"),
    "diff": ("graveler.views.diff", "diff_refs"),
    "diff_uncommitted": ("graveler.views.diff", "diff_uncommitted"),
    "diff_tables": ("graveler.tables.diff", "diff_tables"),
    "import_entries": ("graveler.versioning.commit", "import_entries"),
    "import_data": ("graveler.versioning.imports", "import_data"),
}


class _Method:
    """A method of :class:`Repository` whose module is imported on first use; it then
    replaces itself on the class with the plain function, bound like any method."""

    __slots__ = ("function", "module", "name")

    def __init__(self, name: str, module: str, function: str) -> None:
        self.name, self.module, self.function = name, module, function

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        function = getattr(importlib.import_module(self.module), self.function)
        setattr(Repository, self.name, function)
        return function if obj is None else function.__get__(obj, owner)


for _name, (_module, _function) in _METHODS.items():
    setattr(Repository, _name, _Method(_name, _module, _function))
