"""The entry point: :class:`Graveler` opens the metadata database, the shared tree cache and
object stores, and hands out :class:`Repository` handles.

Configuration (arguments win over a :class:`~graveler.core.config.ClientSettings`, which wins over
the environment; every key is described in :mod:`graveler.core.config`):

* ``home`` (default ``./.graveler``): the SQLite database, the cache and default local storage
  namespaces live here.
* ``database_url``: any SQLAlchemy URL (``sqlite:///...``, ``postgresql+psycopg://...``);
  default ``sqlite:///<home>/graveler.db``. A plain SQLite file is opened by the embedded
  store on the standard library (:mod:`graveler.storage.refs.sqlite_store`), anything else through
  SQLAlchemy (:mod:`graveler.storage.refs.sql`); see
  :func:`graveler.storage.refs.store.open_metadata_store`.
* ``cache_ram_bytes``, ``cache_disk_bytes``: tree cache budgets.
* ``store_options``: S3 options (endpoint_url, region, credentials, ...) for ``s3://``
  namespaces; boto3's own credential chain applies where none are given.
* ``hooks``: a :class:`~graveler.versioning.hooks.registry.HookRegistry` of Python hooks for every
  repository of this client (installed ``graveler.hooks`` entry points add theirs);
  ``hook_modules`` / ``hook_urls`` settings say what action files may run.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from graveler.core import validate
from graveler.core.config import ClientSettings
from graveler.core.model import EMPTY_METARANGE_ID, Branch, RangeSettings
from graveler.core.model import Repository as RepositoryInfo
from graveler.repository import Repository
from graveler.storage import namespaces
from graveler.storage.committed.cache import DEFAULT_DISK_BYTES, DEFAULT_RAM_BYTES, TieredCache
from graveler.storage.committed.manager import CommittedManager
from graveler.storage.committed.splitter import DEFAULT_RANGE_SETTINGS, validate_settings
from graveler.storage.external import ExternalStores
from graveler.storage.objectstore import ObjectStore, open_object_store
from graveler.storage.refs.sqlite_db import plain_sqlite_path
from graveler.storage.refs.store import MetadataStore, open_metadata_store
from graveler.versioning.hooks.dispatch import HookDispatcher
from graveler.versioning.hooks.registry import HookRegistry
from graveler.versioning.hooks.runners import HookPolicy
from graveler.views.cache import ReadCache
from graveler.views.context import CommitCache, RepositoryParts
from graveler.views.history import make_commit
from graveler.views.layers import new_staging_token

if TYPE_CHECKING:
    from graveler.core.model import Commit
    from graveler.storage.committed.merge import MergeStrategy, PrefixOverride
    from graveler.storage.refs.sql_imports import SqlImportStore
    from graveler.storage.refs.sql_server import SqlAccessKeyStore, SqlUploadStore
    from graveler.views.context import RepoContext

INITIAL_COMMIT_MESSAGE = "Repository created"
#: Commits kept in memory per client (they are immutable; lakeFS keeps 50,000 too).
COMMIT_CACHE_SIZE = 50_000


class Graveler:
    """A connection to one graveler deployment: a refs database, a tree cache and the object
    stores of its repositories. Arguments win over ``settings``, which win over the
    environment (see :mod:`graveler.core.config`). Close it (or use ``with``) when done."""

    def __init__(
        self,
        home: str | os.PathLike[str] | None = None,
        database_url: str | None = None,
        *,
        cache_ram_bytes: int | None = None,
        cache_disk_bytes: int | None = None,
        store_options: Mapping[str, Any] | None = None,
        settings: ClientSettings | None = None,
        hooks: HookRegistry | None = None,
    ) -> None:
        explicit = ClientSettings(
            home=None if home is None else os.fspath(home),
            database_url=database_url,
            cache_ram_bytes=cache_ram_bytes,
            cache_disk_bytes=cache_disk_bytes,
            store_options=dict(store_options or {}),
        )
        self.settings = explicit.over(settings or ClientSettings()).over(ClientSettings.from_env())
        self.home = Path(self.settings.home or ".graveler").absolute()
        self.home.mkdir(parents=True, exist_ok=True)
        self.database_url = self.settings.database_url or f"sqlite:///{self.home / 'graveler.db'}"
        self.metadata: MetadataStore = open_metadata_store(self.database_url)
        self.cache = TieredCache(
            str(self.home / "cache"),
            ram_bytes=_budget(self.settings.cache_ram_bytes, DEFAULT_RAM_BYTES),
            disk_bytes=_budget(self.settings.cache_disk_bytes, DEFAULT_DISK_BYTES),
        )
        self.store_options = dict(self.settings.store_options)
        self.commit_cache: CommitCache = CommitCache(COMMIT_CACHE_SIZE)
        self.read_cache = ReadCache()
        self.hooks = HookDispatcher(_copy(hooks), self.metadata, _policy(self.settings))
        self.external = ExternalStores(self.store_options)
        #: Multipart uploads, access keys and background imports, opened on first use.
        self.uploads = cast("SqlUploadStore", _ServerStore("SqlUploadStore", self.database_url))
        self.access_keys = cast(
            "SqlAccessKeyStore", _ServerStore("SqlAccessKeyStore", self.database_url)
        )
        self.imports = cast(
            "SqlImportStore", _ServerStore("SqlImportStore", self.database_url, "sql_imports")
        )
        self._stores: dict[str, ObjectStore] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> Graveler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.metadata.close()
        self.uploads.close()
        self.access_keys.close()
        self.imports.close()

    def object_store(self, namespace: str) -> ObjectStore:
        with self._lock:
            store = self._stores.get(namespace)
            if store is None:
                options = self.store_options if namespace.startswith("s3://") else {}
                store = self._stores[namespace] = open_object_store(namespace, **options)
            return store

    def default_namespace(self, name: str) -> str:
        return (self.home / "data" / name).as_uri()

    # --- repositories ---------------------------------------------------------------------------

    def create_repository(
        self,
        name: str,
        storage_namespace: str | None = None,
        *,
        default_branch: str = "main",
        range_settings: RangeSettings | None = None,
    ) -> Repository:
        """Create a repository with an initial empty commit on ``default_branch``."""
        validate.repository_name(name)
        validate.branch_name(default_branch)
        given = storage_namespace or self.default_namespace(name)
        namespace = namespaces.canonical_namespace(given)
        settings = validate_settings(range_settings or DEFAULT_RANGE_SETTINGS)
        store = self.object_store(namespace)  # refuses an unusable namespace, writes nothing
        namespaces.check_free(self.metadata, self.object_store, name, namespace)
        created = datetime.now(UTC)
        info = RepositoryInfo(name, namespace, default_branch, created, settings)
        initial = make_commit(
            [],
            EMPTY_METARANGE_ID,
            INITIAL_COMMIT_MESSAGE,
            "",  # no committer: lakeFS's first commit has none
            {},
            created,
        )
        branch = Branch(default_branch, initial.id, new_staging_token(name, default_branch))
        self.metadata.create_repository(info, initial, branch)
        namespaces.claim_new(self.metadata, store, info, self.database_url)  # or undo the row
        return self._open(info)

    def repository(self, name: str) -> Repository:
        """A handle on repository ``name``; raises RepositoryNotFound."""
        return self._open(self.metadata.get_repository(name))

    def _open(self, info: RepositoryInfo) -> Repository:
        store = self.object_store(info.storage_namespace)
        namespaces.claim_on_open(store, info, self.database_url)  # older repositories get one
        committed = CommittedManager(store, self.cache, info.range_settings)
        parts = RepositoryParts(
            self.metadata,
            self.metadata,
            store,
            committed,
            self.commit_cache,
            self.settings,
            self.read_cache,
            self.hooks,
            self.external,
            self.uploads,
            _table_merges,
            self.imports,
        )
        return Repository(info, parts)

    def list_repositories(self) -> list[RepositoryInfo]:
        return self.metadata.list_repositories()

    def delete_repository(self, name: str) -> None:
        """Delete the repository's refs and staging. Object data in the namespace is kept."""
        self.metadata.get_repository(name)
        self.metadata.delete_repository(name)
        self.commit_cache.clear()
        self.read_cache.clear()


class _ServerStore:
    """A store of :mod:`graveler.storage.refs.sql_server` made on its first use: that module (and
    SQLAlchemy with it) is imported only by a client that serves or uploads in parts, so a
    command that does neither starts without it. Access keys on a plain SQLite file use the
    embedded store (:mod:`graveler.storage.refs.sqlite_keys`) and never import it."""

    def __init__(self, kind: str, url: str, module: str = "sql_server") -> None:
        self._kind, self._url, self._module = kind, url, module
        self._store: Any = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        with self._lock:
            if self._store is None:
                self._store = self._open()
        return getattr(self._store, name)

    def _open(self) -> Any:
        path = plain_sqlite_path(self._url)
        if path is not None and self._kind == "SqlAccessKeyStore":
            from graveler.storage.refs.sqlite_keys import SqliteAccessKeyStore  # no SQLAlchemy

            return SqliteAccessKeyStore(path)
        found = importlib.import_module(f"graveler.storage.refs.{self._module}")
        return getattr(found, self._kind)(self._url)

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()


_SHARED: dict[tuple[int, tuple[tuple[str, str], ...]], Graveler] = {}
_SHARED_LOCK = threading.Lock()


def shared_client(settings: ClientSettings | None = None) -> Graveler:
    """The process's one client for ``settings`` (unset fields resolved from the environment
    now, as :class:`Graveler` does), opened on first use and never closed. A client holds a
    connection pool and a tree cache, so long-lived users (sensors, triggers, filesystems)
    share it instead of opening one each. Safe from several threads; a forked child gets
    clients of its own (the key includes the process ID)."""
    effective = (settings or ClientSettings()).over(ClientSettings.from_env())
    home = os.path.abspath(effective.home or ".graveler")
    key = (os.getpid(), tuple(sorted({**effective.to_mapping(), "home": home}.items())))
    with _SHARED_LOCK:
        client = _SHARED.get(key)
        if client is None:
            client = _SHARED[key] = Graveler(home, settings=effective)
        return client


def shared_clients() -> int:
    """How many shared clients this process holds (for tests and diagnostics)."""
    pid = os.getpid()
    with _SHARED_LOCK:
        return sum(1 for owner, _ in _SHARED if owner == pid)


def _copy(hooks: HookRegistry | None) -> HookRegistry:
    """A registry of its own for the client (entry points are added to it, not to the
    caller's)."""
    registry = HookRegistry()
    if hooks is not None:
        registry.extend(hooks)
    return registry


def _policy(settings: ClientSettings) -> HookPolicy:
    return HookPolicy(tuple(settings.hook_modules or ()), tuple(settings.hook_urls or ()))


def _budget(value: int | None, default: int) -> int:
    """A cache budget: the configured one, or ``default`` when unset or 0."""
    return value or default


def _table_merges(
    repo: RepoContext,
    base: Commit | None,
    source: Commit,
    dest: Commit,
    strategy: MergeStrategy,
    *,
    source_ref: str,
    dest_ref: str,
) -> PrefixOverride | None:
    """The table layer's merge planner, imported on the first merge (most clients never merge)."""
    from graveler.tables.merge import plan_table_merges

    return plan_table_merges(
        repo, base, source, dest, strategy, source_ref=source_ref, dest_ref=dest_ref
    )
