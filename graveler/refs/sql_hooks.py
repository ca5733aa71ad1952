"""HookRunStore over SQL: the ``graveler_hook_runs`` table (see
:class:`graveler.hookevents.HookRunStore` for the contract)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select

from graveler.errors import NotFound
from graveler.hookevents import HookEvent, HookResult, HookRun, HookStatus
from graveler.refs.db import Database
from graveler.refs.rows import dump_json
from graveler.refs.schema import hook_runs


class SqlHookRunStore:
    """Hook runs in the refs database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add_hook_run(self, run: HookRun) -> None:
        """Insert a run; raises RepositoryNotFound-like StorageError when the repository is
        gone (its runs are deleted with it)."""
        with self._db.write(f"record hook run {run.run_id}") as conn:
            conn.execute(insert(hook_runs).values(_row(run)))

    def get_hook_run(self, repo: str, run_id: str) -> HookRun:
        """Raises NotFound."""
        query = select(hook_runs).where(hook_runs.c.repo == repo, hook_runs.c.run_id == run_id)
        with self._db.read(f"get hook run {run_id!r}") as conn:
            row = conn.execute(query).first()
        if row is None:
            raise NotFound(f"hook run {run_id!r} not found in repository {repo!r}")
        return _run(row)

    def list_hook_runs(
        self,
        repo: str,
        *,
        branch: str | None = None,
        commit_id: str | None = None,
        after: str | None = None,
        amount: int = 100,
    ) -> list[HookRun]:
        """Runs newest first, optionally of one branch or commit, after run ``after``."""
        query = select(hook_runs).where(hook_runs.c.repo == repo)
        if branch is not None:
            query = query.where(hook_runs.c.branch == branch)
        if commit_id is not None:
            query = query.where(hook_runs.c.commit_id == commit_id)
        if after is not None:
            query = query.where(hook_runs.c.run_id < after)
        query = query.order_by(hook_runs.c.run_id.desc()).limit(amount)
        with self._db.read(f"list hook runs of {repo!r}") as conn:
            rows = conn.execute(query).all()
        return [_run(row) for row in rows]


def _row(run: HookRun) -> dict[str, Any]:
    return {
        "repo": run.repository,
        "run_id": run.run_id,
        "event": run.event.value,
        "status": run.status.value,
        "branch": run.branch,
        "tag": run.tag,
        "commit_id": run.commit_id,
        "source_ref": run.source_ref,
        "started": run.started,
        "ended": run.ended,
        "hooks": dump_json([_result_doc(r) for r in run.hooks]),
    }


def _result_doc(r: HookResult) -> dict[str, Any]:
    return {
        "hook_id": r.hook_id,
        "kind": r.kind,
        "status": r.status.value,
        "started": r.started.isoformat(),
        "ended": r.ended.isoformat(),
        "action": r.action,
        "error": r.error,
    }


def _run(row: Row[Any]) -> HookRun:
    return HookRun(
        run_id=row.run_id,
        repository=row.repo,
        event=HookEvent(row.event),
        status=HookStatus(row.status),
        started=row.started,
        ended=row.ended,
        commit_id=row.commit_id,
        branch=row.branch,
        tag=row.tag,
        source_ref=row.source_ref,
        hooks=tuple(
            HookResult(
                d["hook_id"],
                d["kind"],
                HookStatus(d["status"]),
                datetime.fromisoformat(d["started"]),
                datetime.fromisoformat(d["ended"]),
                d["action"],
                d["error"],
            )
            for d in json.loads(row.hooks)
        ),
    )
