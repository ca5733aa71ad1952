"""HookRunStore over SQL: the ``graveler_hook_runs`` table (see
:class:`graveler.core.hookevents.HookRunStore` for the contract)."""

from __future__ import annotations

from sqlalchemy import insert, select

from graveler.core.errors import NotFound
from graveler.core.hookevents import HookRun
from graveler.storage.refs.db import Database
from graveler.storage.refs.rows import hook_run_row, to_hook_run
from graveler.storage.refs.schema import hook_runs


class SqlHookRunStore:
    """Hook runs in the refs database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add_hook_run(self, run: HookRun) -> None:
        """Insert a run; raises RepositoryNotFound-like StorageError when the repository is
        gone (its runs are deleted with it)."""
        with self._db.write(f"record hook run {run.run_id}") as conn:
            conn.execute(insert(hook_runs).values(hook_run_row(run)))

    def get_hook_run(self, repo: str, run_id: str) -> HookRun:
        """Raises NotFound."""
        query = select(hook_runs).where(hook_runs.c.repo == repo, hook_runs.c.run_id == run_id)
        with self._db.read(f"get hook run {run_id!r}") as conn:
            row = conn.execute(query).first()
        if row is None:
            raise NotFound(f"hook run {run_id!r} not found in repository {repo!r}")
        return to_hook_run(row)

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
            found = conn.execute(query).all()
        return [to_hook_run(row) for row in found]
