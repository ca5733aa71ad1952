"""What a repository is made of, and the narrow view of it that the engine's functions take.

:class:`RepositoryParts` is assembled by the client (:class:`graveler.Graveler`) and handed to
:class:`graveler.Repository`; nothing below the client knows the client exists.

:class:`RepoContext` is the protocol that :mod:`graveler.operations`, :mod:`graveler.reads`,
:mod:`graveler.writes`, :mod:`graveler.resolve` and :mod:`graveler.transaction` are written
against. ``Repository`` satisfies it; so can a test double. Keeping these modules on the protocol
(not on ``Repository``) is what keeps the facade free of import loops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from graveler.committed.manager import CommittedManager
from graveler.config import ClientSettings
from graveler.lru import LruCache
from graveler.model import Commit, ResolvedRef
from graveler.model import Repository as RepositoryInfo
from graveler.objectstore.port import ObjectStore
from graveler.refs.port import RefStore, StagingStore

#: Immutable commits by (repository name, commit ID), shared by every repository of a client.
CommitCache = LruCache[tuple[str, str], Commit]


@dataclass(frozen=True, slots=True)
class RepositoryParts:
    """The stores one repository works through. ``commits`` may be shared between repositories
    (keys carry the repository name); the others are bound to this repository's namespace
    (``store``, ``committed``) or shared databases (``refs``, ``staging``). ``settings`` are
    the client's, for work that opens the same stores in another process (Spark executors)."""

    refs: RefStore
    staging: StagingStore
    store: ObjectStore
    committed: CommittedManager
    commits: CommitCache
    settings: ClientSettings


class RepoContext(Protocol):
    """One repository, as the engine's functions see it."""

    @property
    def name(self) -> str: ...

    @property
    def info(self) -> RepositoryInfo: ...

    @property
    def refs(self) -> RefStore: ...

    @property
    def staging(self) -> StagingStore: ...

    @property
    def store(self) -> ObjectStore: ...

    @property
    def committed(self) -> CommittedManager: ...

    def get_commit(self, commit_id: str) -> Commit:
        """A commit by full ID (cached; commits are immutable). Raises CommitNotFound."""
        ...

    def resolve(self, ref: str) -> ResolvedRef:
        """What a ref expression points at. Raises InvalidRef or RefNotFound."""
        ...
