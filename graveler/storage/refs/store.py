"""Opening the refs database a client is configured with: the embedded SQLite store
(:mod:`graveler.storage.refs.sqlite_store`, standard library only) for a plain ``sqlite:///PATH``
URL, the SQLAlchemy store (:mod:`graveler.storage.refs.sql`) for everything else (PostgreSQL,
in-memory SQLite, URLs with options). Only the store that is opened is imported."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from graveler.core.hookevents import HookRunStore
from graveler.core.model import Branch, Commit, Repository, Tag
from graveler.storage.refs.port import RefStore, StagingStore
from graveler.storage.refs.sqlite_db import plain_sqlite_path


class MetadataStore(RefStore, StagingStore, HookRunStore, Protocol):
    """What a client keeps its refs, staging and hook runs in."""

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        ...

    def restore_repository(
        self,
        repo: Repository,
        all_commits: Sequence[Commit],
        all_branches: Sequence[Branch],
        all_tags: Sequence[Tag],
    ) -> None:
        """Insert a repository with all its refs in one transaction (refs restore); raises
        AlreadyExists when the name is taken."""
        ...

    def close(self) -> None:
        """Release every connection; the store must not be used afterwards."""
        ...


def open_metadata_store(url: str, *, busy_timeout: float = 30.0) -> MetadataStore:
    """The store for the database at ``url``, its schema migrated to this build's. Raises
    InvalidArgument for a bad URL, StorageError when the database cannot be opened or
    migrated."""
    path = plain_sqlite_path(url)
    if path is not None:
        from graveler.storage.refs.sqlite_store import SqliteMetadataStore

        return SqliteMetadataStore(path, busy_timeout=busy_timeout)
    from graveler.storage.refs.sql import SqlMetadataStore

    return SqlMetadataStore(url, busy_timeout=busy_timeout)
