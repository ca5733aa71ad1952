"""Deferrable waiting on graveler state, run by Airflow's triggerer.

Every trigger polls the refs database every ``poll_interval`` seconds from a worker thread
(the event loop never blocks on SQL or on opening a client) through the process's shared
client for its connection (:func:`graveler.shared_client`): a hundred deferred sensors on
one connection hold one engine and one tree cache. Payloads are plain JSON carrying commit
IDs. The sensors' triggers fire once:

* :class:`GravelerCommitTrigger`: ``branch`` points at a commit other than
  ``prev_commit_id``: ``{"status": "success", "repository", "branch", "commit_id",
  "previous_commit_id"}``. A branch that does not exist (yet) is waited for.
* :class:`GravelerDiffTrigger`: the committed contents of ``branch`` differ from ``ref``
  under ``prefix``: ``{..., "ref", "prefix", "commit_id", "ref_commit_id", "path"}``.
* :class:`GravelerObjectTrigger`: an object is committed at ``path`` on ``ref`` (or, for a
  ``path`` ending in ``/``, any object under it): ``{..., "ref", "path", "commit_id"}``, the
  commit holding it.

Any other graveler failure (repository missing, bad ref expression, database down) ends the
wait with ``{"status": "error", "message": ...}``, which the sensor turns into a task failure.
Polling only reads, so running a trigger twice (Airflow may) has no side effect.

:class:`~graveler_airflow.triggers.events.GravelerCommitEventTrigger` is the trigger for
asset watchers (event-driven scheduling).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

if TYPE_CHECKING:
    from graveler import Graveler
    from graveler.errors import GravelerError

DEFAULT_POLL_INTERVAL = 30.0
DEFAULT_CONN_ID = "graveler_default"
_MODULE = "graveler_airflow.triggers.graveler"


async def client_for(conn_id: str) -> Graveler:
    """The process's shared client for connection ``conn_id``; the connection is read
    asynchronously and the client opened in a worker thread."""
    from airflow.sdk import BaseHook

    conn = await BaseHook.aget_connection(conn_id)
    return await asyncio.to_thread(_shared, conn.login, conn.password, conn.extra_dejson)


def _shared(login: str | None, password: str | None, extra: dict[str, Any]) -> Graveler:
    from graveler import shared_client
    from graveler_airflow.hooks.graveler import settings_from_connection

    return shared_client(settings_from_connection(login, password, extra))


class _GravelerPollingTrigger(BaseTrigger):
    """Polls :meth:`check` with the shared client until it returns a payload."""

    def __init__(
        self,
        *,
        repository: str,
        branch: str,
        graveler_conn_id: str = DEFAULT_CONN_ID,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.repository = repository
        self.branch = branch
        self.graveler_conn_id = graveler_conn_id
        self.poll_interval = float(poll_interval)

    def _kwargs(self) -> dict[str, Any]:
        return {
            "repository": self.repository,
            "branch": self.branch,
            "graveler_conn_id": self.graveler_conn_id,
            "poll_interval": self.poll_interval,
        }

    def check(self, client: Graveler) -> dict[str, Any] | None:
        """One poll (runs in a worker thread): the event payload, or None to keep waiting."""
        raise NotImplementedError

    async def run(self) -> AsyncIterator[TriggerEvent]:
        from graveler.errors import GravelerError

        try:
            client = await client_for(self.graveler_conn_id)
            while True:
                payload = await asyncio.to_thread(self.check, client)
                if payload is not None:
                    yield TriggerEvent({"status": "success", **payload})  # type: ignore[no-untyped-call]
                    return
                await asyncio.sleep(self.poll_interval)
        except GravelerError as exc:
            yield TriggerEvent(self._error(exc))  # type: ignore[no-untyped-call]

    def _error(self, exc: GravelerError) -> dict[str, Any]:
        return {
            "status": "error",
            "repository": self.repository,
            "branch": self.branch,
            "message": f"{type(exc).__name__}: {exc}",
        }


class GravelerCommitTrigger(_GravelerPollingTrigger):
    """Fires when ``branch`` gets a commit: its head differs from ``prev_commit_id``."""

    def __init__(self, *, prev_commit_id: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prev_commit_id = prev_commit_id

    def serialize(self) -> tuple[str, dict[str, Any]]:
        kwargs = {**self._kwargs(), "prev_commit_id": self.prev_commit_id}
        return f"{_MODULE}.GravelerCommitTrigger", kwargs

    def check(self, client: Graveler) -> dict[str, Any] | None:
        head = branch_head(client, self.repository, self.branch)
        if head is None or head == self.prev_commit_id:
            return None
        return {
            "repository": self.repository,
            "branch": self.branch,
            "commit_id": head,
            "previous_commit_id": self.prev_commit_id,
        }


class GravelerDiffTrigger(_GravelerPollingTrigger):
    """Fires when ``branch`` differs from ``ref`` under ``prefix`` (committed contents)."""

    def __init__(self, *, ref: str = "main", prefix: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ref = ref
        self.prefix = prefix

    def serialize(self) -> tuple[str, dict[str, Any]]:
        kwargs = {**self._kwargs(), "ref": self.ref, "prefix": self.prefix}
        return f"{_MODULE}.GravelerDiffTrigger", kwargs

    def check(self, client: Graveler) -> dict[str, Any] | None:
        found = first_difference(client, self.repository, self.branch, self.ref, self.prefix)
        if found is None:
            return None
        commit_id, ref_commit_id, path = found
        return {
            "repository": self.repository,
            "branch": self.branch,
            "ref": self.ref,
            "prefix": self.prefix,
            "commit_id": commit_id,
            "ref_commit_id": ref_commit_id,
            "path": path,
        }


class GravelerObjectTrigger(_GravelerPollingTrigger):
    """Fires when an object is committed at ``path`` on ``ref`` (``branch`` is the ref), or
    under ``path`` when it ends with ``/``. Writes staged on a branch do not count."""

    def __init__(self, *, path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path = path

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{_MODULE}.GravelerObjectTrigger", {**self._kwargs(), "path": self.path}

    def check(self, client: Graveler) -> dict[str, Any] | None:
        found = find_object(client, self.repository, self.branch, self.path)
        if found is None:
            return None
        commit_id, path = found
        return {
            "repository": self.repository,
            "ref": self.branch,
            "path": path,
            "commit_id": commit_id,
        }


def branch_head(client: Graveler, repository: str, branch: str) -> str | None:
    """The commit ID ``branch`` points at, or None while it does not exist."""
    from graveler.errors import BranchNotFound

    try:
        return client.repository(repository).branch(branch).commit_id
    except BranchNotFound:
        return None


def first_difference(
    client: Graveler, repository: str, branch: str, ref: str, prefix: str
) -> tuple[str, str, str] | None:
    """``(branch commit, ref commit, first differing path)`` when the committed contents of
    ``branch`` and ``ref`` differ under ``prefix``, else None (also while the branch is
    missing). The diff seeks to ``prefix``: its cost follows what lies under it."""
    from graveler.errors import BranchNotFound

    repo = client.repository(repository)
    try:
        head = repo.branch(branch).commit_id
    except BranchNotFound:
        return None
    base = repo.resolve(ref).commit.id
    first = next(iter(repo.diff(base, head, prefix=prefix)), None)
    return None if first is None else (head, base, first.path)


def find_object(client: Graveler, repository: str, ref: str, path: str) -> tuple[str, str] | None:
    """``(commit ID, path of the object found)`` when the commit ``ref`` resolves to holds
    ``path`` (or, for a path ending with ``/``, anything under it); None otherwise, also while
    a branch is missing. Staged writes do not count: the commit returned holds the object."""
    from graveler.errors import BranchNotFound, ObjectNotFound, RefNotFound

    repo = client.repository(repository)
    try:
        commit_id = repo.resolve(ref).commit.id
        if path.endswith("/"):
            entry = next(iter(repo.iter_objects(commit_id, path)), None)
            return None if entry is None else (commit_id, entry.path)
        return commit_id, repo.stat(commit_id, path).path
    except (BranchNotFound, ObjectNotFound, RefNotFound):
        return None
