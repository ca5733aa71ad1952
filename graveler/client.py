"""The entry point: :class:`Graveler` opens the metadata database, the shared tree cache and
object stores, and hands out :class:`Repository` handles.

Configuration (arguments win over environment):

* ``home`` / ``GRAVELER_HOME`` (default ``./.graveler``): the SQLite database, the cache and
  default local storage namespaces live here.
* ``database_url`` / ``GRAVELER_DATABASE_URL``: any SQLAlchemy URL (``sqlite:///...``,
  ``postgresql+psycopg://...``); default ``sqlite:///<home>/graveler.db``.
* ``GRAVELER_CACHE_RAM_BYTES``, ``GRAVELER_CACHE_DISK_BYTES``: tree cache budgets.
* S3 settings are passed to :func:`graveler.objectstore.open_object_store` for ``s3://``
  namespaces via ``store_options`` (endpoint_url, region, credentials) or the usual AWS
  environment (``GRAVELER_S3_ENDPOINT_URL``, ``AWS_*``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from graveler import namespaces, validate
from graveler.commits import make_commit
from graveler.committed.cache import DEFAULT_DISK_BYTES, DEFAULT_RAM_BYTES, TieredCache
from graveler.committed.splitter import DEFAULT_RANGE_SETTINGS, validate_settings
from graveler.errors import InvalidArgument
from graveler.lru import LruCache
from graveler.model import EMPTY_METARANGE_ID, Branch, Commit, RangeSettings
from graveler.model import Repository as RepositoryInfo
from graveler.namespaces import canonical_namespace
from graveler.objectstore import ObjectStore, open_object_store
from graveler.refs.sql import SqlMetadataStore
from graveler.repository import Repository, new_staging_token

INITIAL_COMMIT_MESSAGE = "Repository created"
#: Commits kept in memory per client (they are immutable; lakeFS keeps 50,000 too).
COMMIT_CACHE_SIZE = 50_000


class Graveler:
    def __init__(
        self,
        home: str | os.PathLike[str] | None = None,
        database_url: str | None = None,
        *,
        cache_ram_bytes: int | None = None,
        cache_disk_bytes: int | None = None,
        store_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.home = Path(home or os.environ.get("GRAVELER_HOME") or ".graveler").absolute()
        self.home.mkdir(parents=True, exist_ok=True)
        url = database_url or os.environ.get("GRAVELER_DATABASE_URL")
        self.database_url = url or f"sqlite:///{self.home / 'graveler.db'}"
        self.metadata = SqlMetadataStore(self.database_url)
        self.cache = TieredCache(
            str(self.home / "cache"),
            ram_bytes=cache_ram_bytes or _env_int("GRAVELER_CACHE_RAM_BYTES", DEFAULT_RAM_BYTES),
            disk_bytes=cache_disk_bytes
            or _env_int("GRAVELER_CACHE_DISK_BYTES", DEFAULT_DISK_BYTES),
        )
        self.store_options = dict(store_options or {})
        self.commit_cache: LruCache[tuple[str, str], Commit] = LruCache(COMMIT_CACHE_SIZE)
        self._stores: dict[str, ObjectStore] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> Graveler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.metadata.close()

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
        namespace = canonical_namespace(storage_namespace or self.default_namespace(name))
        settings = validate_settings(range_settings or DEFAULT_RANGE_SETTINGS)
        self.object_store(namespace)  # refuses an unusable namespace before anything is written
        namespaces.check_free(self, name, namespace)
        created = datetime.now(UTC)
        info = RepositoryInfo(name, namespace, default_branch, created, settings)
        initial = make_commit(
            [], EMPTY_METARANGE_ID, INITIAL_COMMIT_MESSAGE, "graveler", {}, created
        )
        branch = Branch(default_branch, initial.id, new_staging_token(name, default_branch))
        self.metadata.create_repository(info, initial, branch)
        namespaces.claim_new(self, info)  # the marker: undoes the row when the claim is lost
        return Repository(self, info)

    def repository(self, name: str) -> Repository:
        info = self.metadata.get_repository(name)
        namespaces.claim_on_open(self, info)  # repositories older than markers get one
        return Repository(self, info)

    def list_repositories(self) -> list[RepositoryInfo]:
        return self.metadata.list_repositories()

    def delete_repository(self, name: str) -> None:
        """Delete the repository's refs and staging. Object data in the namespace is kept."""
        self.metadata.get_repository(name)
        self.metadata.delete_repository(name)
        self.commit_cache.clear()


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise InvalidArgument(f"{name} must be an integer number of bytes, got {raw!r}") from None
