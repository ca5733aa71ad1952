"""What a repository is made of, and the narrow view of it that the engine's functions take.

:class:`RepositoryParts` is assembled by the client (:class:`graveler.Graveler`) and handed to
:class:`graveler.Repository`; nothing below the client knows the client exists.

:class:`RepoContext` is the protocol that :mod:`graveler.versioning.commit`,
:mod:`graveler.views.reads`,
:mod:`graveler.versioning.writes`, :mod:`graveler.views.resolve` and
:mod:`graveler.versioning.transaction` are written against. ``Repository`` satisfies it; so can a
test double. Keeping these modules on the protocol (not on ``Repository``) is what keeps the facade
free of import loops.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from graveler.core.config import ClientSettings
from graveler.core.errors import NotFound
from graveler.core.hookevents import EventRecord, HookRun, HookRunStore
from graveler.core.lru import LruCache
from graveler.core.model import Commit, ResolvedRef
from graveler.core.model import Repository as RepositoryInfo
from graveler.storage.committed.manager import CommittedManager
from graveler.storage.external import ExternalStores
from graveler.storage.objectstore.port import ObjectStore
from graveler.storage.refs.port import RefStore, StagingStore
from graveler.views.cache import ReadCache, ReadView

if TYPE_CHECKING:  # the server's stores load SQLAlchemy: only a client that uses them does
    from graveler.storage.committed.merge import MergeStrategy, PrefixOverride  # merges only
    from graveler.storage.refs.sql_imports import SqlImportStore
    from graveler.storage.refs.sql_server import SqlUploadStore

#: Immutable commits by (repository name, commit ID), shared by every repository of a client.
CommitCache = LruCache[tuple[str, str], Commit]


class HookDispatch(Protocol):
    """Runs the hooks an event matches (see :mod:`graveler.versioning.hooks`); ``runs`` is where
    runs are recorded."""

    @property
    def runs(self) -> HookRunStore: ...

    def run(self, repo: RepoContext, record: EventRecord) -> str | None:
        """Run every hook ``record`` matches and record the run; returns its ID, or None when
        no hook matched. A failing ``pre-`` hook raises HookAborted (the caller then changes
        nothing); ``post-`` hooks never raise."""
        ...


class _NoRuns:
    def add_hook_run(self, run: HookRun) -> None:
        pass

    def get_hook_run(self, repo: str, run_id: str) -> HookRun:
        raise NotFound(f"hook run {run_id!r} not found in repository {repo!r}")

    def list_hook_runs(self, repo: str, **filters: object) -> list[HookRun]:
        return []


class _NoHooks:
    runs: HookRunStore = _NoRuns()

    def run(self, repo: RepoContext, record: EventRecord) -> str | None:
        return None


#: A dispatcher that runs nothing (repositories built without a client).
NO_HOOKS: HookDispatch = _NoHooks()


@dataclass(frozen=True, slots=True)
class RepositoryParts:
    """The stores one repository works through. ``commits`` may be shared between repositories
    (keys carry the repository name); the others are bound to this repository's namespace
    (``store``, ``committed``) or shared databases (``refs``, ``staging``). ``settings`` are
    the client's, for work that opens the same stores in another process (Spark executors).
    ``reads`` (views of commit IDs and branches, decoded entries) is shared like ``commits``.
    ``hooks`` runs the client's hooks and the repository's action files; ``external`` opens
    the stores of imported objects that live outside the namespace; ``uploads`` holds the
    multipart uploads in progress (:mod:`graveler.versioning.multipart`). ``table_merges``
    plans how a merge treats the tables both sides changed (the client plugs in
    :func:`graveler.tables.merge.plan_table_merges`); None merges every file key by key.
    ``imports`` records the imports run in the background
    (:mod:`graveler.versioning.import_jobs`)."""

    refs: RefStore
    staging: StagingStore
    store: ObjectStore
    committed: CommittedManager
    commits: CommitCache
    settings: ClientSettings
    reads: ReadCache = field(default_factory=ReadCache)
    hooks: HookDispatch = NO_HOOKS
    external: ExternalStores = field(default_factory=ExternalStores)
    uploads: SqlUploadStore | None = None
    table_merges: TableMerges | None = None
    imports: SqlImportStore | None = None


class TableMerges(Protocol):
    """Plans the table part of a three-way merge: the override for the tables that both sides
    changed since ``base``, merged by their formats, or None when there is none."""

    def __call__(
        self,
        repo: RepoContext,
        base: Commit | None,
        source: Commit,
        dest: Commit,
        strategy: MergeStrategy,
        *,
        source_ref: str,
        dest_ref: str,
    ) -> PrefixOverride | None: ...


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

    @property
    def hooks(self) -> HookDispatch: ...

    @property
    def external(self) -> ExternalStores: ...

    @property
    def table_merges(self) -> TableMerges | None:
        """How a merge treats tables both sides changed (None: as plain files)."""
        ...

    def get_commit(self, commit_id: str) -> Commit:
        """A commit by full ID (cached; commits are immutable). Raises CommitNotFound."""
        ...

    def resolve(self, ref: str, *, branches: bool = True) -> ResolvedRef:
        """What a ref expression points at (``branches=False``: its base is known not to be
        a branch). Raises InvalidRef or RefNotFound."""
        ...

    @property
    def read_cache(self) -> ReadCache:
        """Views of refs and decoded entries, shared by the client's repositories."""
        ...

    def view(self, ref: str) -> ReadView:
        """What a read at ``ref`` sees (:meth:`graveler.views.cache.ReadCache.view`): the commit,
        and for a branch name its staged entries, as of now. Raises InvalidRef or RefNotFound."""
        ...


@contextmanager
def hooked(repo: RepoContext, event: EventRecord) -> Iterator[None]:
    """Run ``event``'s ``pre-`` hooks, then the block, then its ``post-`` hooks. A failing
    ``pre-`` hook raises HookAborted and the block does not run; the ``post-`` hooks run only
    when the block succeeded."""
    repo.hooks.run(repo, event)
    yield
    repo.hooks.run(repo, event.after())
