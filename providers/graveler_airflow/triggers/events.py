"""A trigger for Airflow asset watchers: schedule DAGs on commits that land in a branch.

    from airflow.sdk import DAG, Asset, AssetWatcher
    from graveler_airflow.triggers.events import GravelerCommitEventTrigger

    daily = Asset(
        "graveler://lake/main/tables/daily",
        watchers=[AssetWatcher(
            name="daily-lands",
            trigger=GravelerCommitEventTrigger(repository="lake", branch="main",
                                               prefix="tables/daily/"),
        )],
    )
    with DAG("report", schedule=[daily]): ...

Unlike the sensors' triggers, which fire once, :class:`GravelerCommitEventTrigger` runs for
as long as the watcher exists and fires once per new head of ``branch`` whose commits changed
something under ``prefix`` (any commit, whoever made it: a DAG, Spark, the CLI). Each event's
payload carries ``commit_id``, ``previous_commit_id`` (the head the last event, or the start,
saw) and ``path`` (the first changed path). The head last reported is kept in the watched
asset's state store (Airflow 3.3+) once the triggerer has taken its event, so a restarted
triggerer carries on from there (an event taken but not yet persisted by Airflow when it
stopped is delivered again: at least once, never lost); without a state store it starts from
the current head.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from graveler_airflow.triggers.graveler import (
    DEFAULT_CONN_ID,
    DEFAULT_POLL_INTERVAL,
    branch_head,
    client_for,
)

if TYPE_CHECKING:
    from graveler import Graveler

log = logging.getLogger(__name__)


class GravelerCommitEventTrigger(BaseEventTrigger):
    """Fires for every new head of ``branch`` that changed something under ``prefix``."""

    def __init__(
        self,
        *,
        repository: str,
        branch: str = "main",
        prefix: str = "",
        graveler_conn_id: str = DEFAULT_CONN_ID,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.repository = repository
        self.branch = branch
        self.prefix = prefix
        self.graveler_conn_id = graveler_conn_id
        self.poll_interval = float(poll_interval)
        self._memory: str | None = None

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{__name__}.GravelerCommitEventTrigger",
            {
                "repository": self.repository,
                "branch": self.branch,
                "prefix": self.prefix,
                "graveler_conn_id": self.graveler_conn_id,
                "poll_interval": self.poll_interval,
            },
        )

    @property
    def state_key(self) -> str:
        """The key under which the head last reported is stored."""
        return f"graveler:{self.repository}/{self.branch}:{self.prefix}:last_commit_id"

    async def run(self) -> AsyncIterator[TriggerEvent]:
        client = await client_for(self.graveler_conn_id)
        seen = await self._load()
        if seen is None:
            seen = await asyncio.to_thread(branch_head, client, self.repository, self.branch)
            await self._save(seen)
        while True:
            await asyncio.sleep(self.poll_interval)
            try:
                head, payload = await asyncio.to_thread(self.check, client, seen)
            except Exception:  # a watcher outlives a database hiccup: log, poll again
                log.warning("Polling %s/%s failed", self.repository, self.branch, exc_info=True)
                continue
            if payload is not None:
                yield TriggerEvent(payload)  # type: ignore[no-untyped-call]
            if head != seen:
                seen = head
                await self._save(head)

    def check(self, client: Graveler, seen: str | None) -> tuple[str | None, dict[str, Any] | None]:
        """One poll: the branch head, and the event payload when the commits since ``seen``
        changed something under the prefix."""
        head = branch_head(client, self.repository, self.branch)
        if head is None or head == seen:
            return head, None
        repo = client.repository(self.repository)
        base = seen if seen is not None else head
        first = next(iter(repo.diff(base, head, prefix=self.prefix)), None)
        if first is None and seen is not None:
            return head, None
        return head, {
            "repository": self.repository,
            "branch": self.branch,
            "prefix": self.prefix,
            "commit_id": head,
            "previous_commit_id": seen,
            "path": first.path if first is not None else None,
        }

    async def _load(self) -> str | None:
        store = getattr(self, "asset_state_store", None)
        if store is not None:
            try:
                value = await store.aget(self.state_key)
            except ValueError:  # several watched assets: no single state to use
                return self._memory
            return str(value) if value else None
        return self._memory

    async def _save(self, commit_id: str | None) -> None:
        self._memory = commit_id
        store = getattr(self, "asset_state_store", None)
        if store is not None and commit_id is not None:
            with contextlib.suppress(ValueError):  # several watched assets
                await store.aset(self.state_key, commit_id)
