"""Imports run in the background (``graveler_imports``): where each stands, for every worker.

Every change of state is one conditional ``UPDATE`` on the job's row, so a runner, a cancel
and a status read that settles a stale import never overwrite each other: a cancel applies to
a running import only, the runner's claim to commit to one nobody canceled, a final state to an
active import only. Opened on first use, as the server's other stores
(:mod:`graveler.storage.refs.sql_server`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select, update

from graveler.core.errors import NotFound
from graveler.core.model import ImportJob, ImportState
from graveler.storage.refs.rows import dump_json
from graveler.storage.refs.schema import imports
from graveler.storage.refs.sql_server import _LazyDatabase

_ACTIVE = (ImportState.RUNNING.value, ImportState.COMMITTING.value)


class SqlImportStore(_LazyDatabase):
    """The rows of ``graveler_imports`` (see the module docstring)."""

    def create(self, job: ImportJob) -> None:
        """Record a new import (its repository exists: the caller checked); raises
        AlreadyExists when its ID is taken."""
        with self.db.write("record an import", duplicate=f"import {job.id!r} exists") as conn:
            conn.execute(insert(imports).values(_row(job)))

    def get(self, import_id: str) -> ImportJob:
        """Raises NotFound."""
        with self.db.read("read an import") as conn:
            row = conn.execute(select(imports).where(imports.c.id == import_id)).first()
        if row is None:
            raise NotFound(f"no import {import_id!r}")
        return _job(row)

    def beat(self, import_id: str, ingested: int, at: datetime) -> ImportJob:
        """The runner's sign of life (with its progress), when the import is still active;
        returns the row as it is now (a canceled one tells the runner to stop)."""
        values = {"ingested": ingested, "heartbeat": at, "updated": at}
        self._update(import_id, _ACTIVE, durable=False, **values)
        return self.get(import_id)

    def cancel(self, import_id: str, at: datetime, error: str) -> ImportJob:
        """Mark a *running* import canceled; returns the row as it is now (unchanged when the
        import was not running)."""
        self._update(
            import_id, (ImportState.RUNNING.value,), state="canceled", error=error, updated=at
        )
        return self.get(import_id)

    def claim_commit(self, import_id: str, commit_id: str, at: datetime) -> bool:
        """The runner's last step before moving the branch: the import becomes
        ``committing`` (no cancel can stop it now) with the commit it makes. False when the
        import is no longer active (canceled, or settled as stale): the runner must stop."""
        return self._update(
            import_id,
            _ACTIVE,
            state="committing",
            commit_id=commit_id,
            heartbeat=at,
            updated=at,
        )

    def finish(
        self,
        import_id: str,
        state: ImportState,
        at: datetime,
        *,
        stale_before: datetime | None = None,
        **fields: Any,
    ) -> bool:
        """Give an active import its final ``state`` (and ``fields``: error, ingested,
        commit_id, metarange_id); with ``stale_before``, only when its heartbeat is older.
        False when it was not active (or not stale)."""
        extra = () if stale_before is None else (imports.c.heartbeat < stale_before,)
        return self._update(import_id, _ACTIVE, *extra, state=state.value, updated=at, **fields)

    def _update(
        self,
        import_id: str,
        states: Sequence[str],
        *where: Any,
        durable: bool = True,
        **values: Any,
    ) -> bool:
        """One conditional update; ``durable=False`` for heartbeats (SQLite: not fsynced)."""
        query = (
            update(imports)
            .where(imports.c.id == import_id, imports.c.state.in_(states), *where)
            .values(**values)
        )
        with self.db.write("update an import", durable=durable) as conn:
            return bool(conn.execute(query).rowcount == 1)


def _row(job: ImportJob) -> dict[str, object]:
    return {
        "id": job.id,
        "repo": job.repo,
        "branch": job.branch,
        "sources": dump_json([list(s) for s in job.sources]),
        "state": job.state.value,
        "ingested": job.ingested,
        "error": job.error,
        "metarange_id": job.metarange_id,
        "commit_id": job.commit_id,
        "created": job.created,
        "updated": job.updated,
        "heartbeat": job.heartbeat,
    }


def _job(row: Row[Any]) -> ImportJob:
    m = row._mapping
    return ImportJob(
        id=m["id"],
        repo=m["repo"],
        branch=m["branch"],
        sources=tuple((str(k), str(u), str(d)) for k, u, d in json.loads(m["sources"])),
        state=ImportState(m["state"]),
        ingested=int(m["ingested"]),
        created=m["created"],
        updated=m["updated"],
        heartbeat=m["heartbeat"],
        error=m["error"],
        metarange_id=m["metarange_id"],
        commit_id=m["commit_id"],
    )
