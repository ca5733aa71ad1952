"""Deferrable waiting on graveler state, run by Airflow's triggerer.

Both triggers poll the refs database every ``poll_interval`` seconds from a worker thread (the
event loop never blocks on SQL) and fire one event whose payload is plain JSON carrying commit
IDs:

* :class:`GravelerCommitTrigger` fires when ``branch`` points at a commit other than
  ``prev_commit_id``: ``{"status": "success", "repository", "branch", "commit_id",
  "previous_commit_id"}``. A branch that does not exist (yet) is waited for.
* :class:`GravelerDiffTrigger` fires when the committed contents of ``branch`` differ from
  ``ref`` under ``prefix``: ``{"status": "success", "repository", "branch", "ref", "prefix",
  "commit_id", "ref_commit_id", "path"}`` (``path``: the first differing path).

Any other graveler failure (repository missing, bad ref expression, database down) ends the
wait with ``{"status": "error", "message": ...}``, which the sensor turns into a task failure.
Polling only reads, so running a trigger twice (Airflow may) has no side effect.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from graveler import ClientSettings, Graveler
from graveler.errors import BranchNotFound, GravelerError
from graveler_airflow.hooks.graveler import GravelerHook, settings_from_connection

DEFAULT_POLL_INTERVAL = 30.0


class _GravelerPollingTrigger(BaseTrigger):
    """Opens one client for the whole wait and polls :meth:`check` until it returns a payload."""

    def __init__(
        self,
        *,
        repository: str,
        branch: str,
        graveler_conn_id: str = GravelerHook.default_conn_name,
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
        try:
            settings = await self._settings()
            client = await asyncio.to_thread(Graveler, settings=settings)
        except GravelerError as exc:
            yield TriggerEvent(self._error(exc))  # type: ignore[no-untyped-call]
            return
        try:
            while True:
                try:
                    payload = await asyncio.to_thread(self.check, client)
                except GravelerError as exc:
                    yield TriggerEvent(self._error(exc))  # type: ignore[no-untyped-call]
                    return
                if payload is not None:
                    yield TriggerEvent({"status": "success", **payload})  # type: ignore[no-untyped-call]
                    return
                await asyncio.sleep(self.poll_interval)
        finally:
            await asyncio.to_thread(client.close)

    async def _settings(self) -> ClientSettings:
        conn = await GravelerHook.aget_connection(self.graveler_conn_id)
        return settings_from_connection(conn.login, conn.password, conn.extra_dejson)

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
        return (
            "graveler_airflow.triggers.graveler.GravelerCommitTrigger",
            {**self._kwargs(), "prev_commit_id": self.prev_commit_id},
        )

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
        return (
            "graveler_airflow.triggers.graveler.GravelerDiffTrigger",
            {**self._kwargs(), "ref": self.ref, "prefix": self.prefix},
        )

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


def branch_head(client: Graveler, repository: str, branch: str) -> str | None:
    """The commit ID ``branch`` points at, or None while it does not exist."""
    try:
        return client.repository(repository).branch(branch).commit_id
    except BranchNotFound:
        return None


def first_difference(
    client: Graveler, repository: str, branch: str, ref: str, prefix: str
) -> tuple[str, str, str] | None:
    """``(branch commit, ref commit, first differing path)`` when the committed contents of
    ``branch`` and ``ref`` differ under ``prefix``, else None (also while the branch is
    missing)."""
    repo = client.repository(repository)
    try:
        head = repo.branch(branch).commit_id
    except BranchNotFound:
        return None
    base = repo.resolve(ref).commit.id
    for d in repo.diff(base, head):  # sorted by path: the prefix's paths are contiguous
        if d.path.startswith(prefix):
            return head, base, d.path
        if d.path > prefix:
            break
    return None
