"""The Repository facade: refs, branches, tags, objects and versioning of one repository.

A thin class over the parts the client hands it (:class:`graveler.context.RepositoryParts`):
every method is a function of :mod:`graveler.branches`, :mod:`graveler.reads`,
:mod:`graveler.writes` or :mod:`graveler.operations`, bound here so that users write
``repo.commit("main", "msg")``. Those modules take the narrow
:class:`graveler.context.RepoContext` protocol, which this class satisfies.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

from graveler import branches, operations, reads, writes
from graveler.commits import first_parent_log
from graveler.committed.manager import CommittedManager
from graveler.config import ClientSettings
from graveler.context import RepositoryParts
from graveler.errors import InvalidArgument
from graveler.model import Commit, ResolvedRef
from graveler.model import Repository as RepositoryInfo
from graveler.objectstore.port import ObjectStore
from graveler.refs.port import RefStore, StagingStore
from graveler.resolve import resolve
from graveler.transaction import Transaction, transaction
from graveler.writes import EntryAttributes

__all__ = ["EntryAttributes", "Repository"]


class Repository:
    """One repository. Obtain it from :meth:`graveler.Graveler.repository` or
    :meth:`graveler.Graveler.create_repository`."""

    def __init__(self, info: RepositoryInfo, parts: RepositoryParts) -> None:
        self.info = info
        self.parts = parts

    def __repr__(self) -> str:
        return f"Repository({self.name!r}, namespace={self.info.storage_namespace!r})"

    @property
    def name(self) -> str:
        return self.info.name

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

    def resolve(self, ref: str) -> ResolvedRef:
        """Resolve a ref expression (branch, tag, commit ID or prefix, then ~N / ^N)."""
        return resolve(self, ref)

    def log(self, ref: str, amount: int | None = None) -> Iterator[Commit]:
        """Commits from ``ref`` back along first parents, newest first."""
        if amount is not None and amount < 0:
            raise InvalidArgument("amount must be >= 0")
        return first_parent_log(self.get_commit, self.resolve(ref).commit, amount)

    # --- branches and tags ----------------------------------------------------------------------

    create_branch = branches.create_branch
    branch = branches.get_branch
    list_branches = branches.list_branches
    delete_branch = branches.delete_branch
    protect_branch = branches.protect_branch
    create_tag = branches.create_tag
    tag = branches.get_tag
    list_tags = branches.list_tags
    delete_tag = branches.delete_tag

    # --- objects --------------------------------------------------------------------------------

    put = writes.put
    link = writes.link
    make_linked_entry = writes.make_linked_entry
    stage_entries = writes.stage_entries
    delete = writes.delete
    delete_many = writes.delete_many
    stat = reads.stat
    stat_many = reads.stat_many
    open = reads.open_object
    get = reads.get
    read_entry = reads.read_entry
    open_entry = reads.open_entry
    physical_uri = reads.physical_uri
    iter_objects = reads.iter_objects
    list = reads.list_objects

    # --- versioning -----------------------------------------------------------------------------

    commit = operations.commit
    merge = operations.merge
    revert = operations.revert
    reset = operations.reset
    diff = operations.diff_refs
    diff_uncommitted = operations.diff_uncommitted
    import_entries = operations.import_entries

    def transaction(
        self, base: str | None = None, **kwargs: Any
    ) -> AbstractContextManager[Transaction]:
        """``with repo.transaction("main") as tx:``: writes on an ephemeral branch, merged
        into ``base`` when the block succeeds (see :mod:`graveler.transaction`)."""
        return transaction(self, base or self.info.default_branch, **kwargs)
