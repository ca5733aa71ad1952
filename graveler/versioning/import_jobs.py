"""Imports run in the background: started at once, followed and canceled from any worker.

``repo.imports.start("main", [ImportSource.prefix(...), ImportSource.object(...)])`` checks
what it can at once (the sources, the branch: it exists, nothing blocks commits on it, it has
no uncommitted changes), records the import in the refs database (``graveler_imports``) and
runs :func:`graveler.versioning.imports.import_data` on a thread of this process. The runner
writes its progress and a heartbeat there every :func:`beat_seconds`; each beat also tells it
whether the import was canceled, and it stops at its next batch if so.

* ``status(id)`` reads the row (any worker, any replica). An active import whose heartbeat
  is older than the lease (``GRAVELER_IMPORT_LEASE_SECONDS``, default 30) lost its runner (the
  process died): the read settles it, as failed, or as completed if its commit did land.
* ``cancel(id)`` stops a running import: nothing is committed, nothing staged. An import that
  completed (or is moving its branch) cannot be canceled: Conflict.
* ``wait(id)`` polls until the import is final.

An import's runner lives in the process that started it: a server runs imports on its own
threads, never in a request.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from graveler.core.errors import (
    Conflict,
    GravelerError,
    ImportCanceled,
    InvalidArgument,
    NotFound,
)
from graveler.core.model import Commit, ImportJob, ImportState
from graveler.versioning.cherrypick import clean_branch
from graveler.versioning.import_sources import ImportSource, checked
from graveler.versioning.imports import ImportControl, import_data
from graveler.views.context import RepoContext

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from graveler.storage.refs.sql_imports import SqlImportStore

log = logging.getLogger("graveler.imports")
LEASE_ENV = "GRAVELER_IMPORT_LEASE_SECONDS"
DEFAULT_LEASE = 30.0
#: The error an import canceled by a user reports (lakeFS's word, which its clients look for).
CANCELED = "Canceled: the import was canceled before it committed; nothing changed"


def lease_seconds() -> float:
    """How long an active import may go without a heartbeat before a status read settles it."""
    raw = os.environ.get(LEASE_ENV)
    try:
        value = float(raw) if raw else DEFAULT_LEASE
    except ValueError:
        raise InvalidArgument(f"{LEASE_ENV}={raw!r} is not a number of seconds") from None
    return max(value, 0.5)


def beat_seconds() -> float:
    """How often a runner writes its heartbeat: a tenth of the lease, 0.1 to 2 seconds."""
    return min(max(lease_seconds() / 10, 0.1), 2.0)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class _Request:
    """What an import was asked to do, for its runner."""

    branch: str
    sources: tuple[ImportSource, ...]
    message: str | None
    metadata: Mapping[str, str] | None
    committer: str | None


class Imports:
    """The background imports of one repository (``repo.imports``; see the module docstring)."""

    def __init__(self, repo: RepoContext, store: SqlImportStore) -> None:
        self.repo = repo
        self.store = store

    def start(
        self,
        branch: str,
        sources: Sequence[ImportSource],
        *,
        message: str | None = None,
        metadata: Mapping[str, str] | None = None,
        committer: str | None = None,
    ) -> ImportJob:
        """Check, record and start an import; returns it (running). Raises what
        ``import_data`` raises before it reads anything (InvalidURI, InvalidArgument,
        BranchNotFound, ProtectedBranch, DirtyBranch); nothing is recorded then."""
        located = checked(self.repo, list(sources))
        clean_branch(self.repo, branch, "import")
        now = _now()
        job = ImportJob(
            id=os.urandom(10).hex(),
            repo=self.repo.name,
            branch=branch,
            sources=tuple((s.kind.value, s.uri, s.destination) for s in located),
            state=ImportState.RUNNING,
            ingested=0,
            created=now,
            updated=now,
            heartbeat=now,
        )
        self.store.create(job)
        request = _Request(branch, tuple(sources), message, metadata, committer)
        runner = _Runner(self.repo, self.store, job.id, request)
        threading.Thread(target=runner.run, name=f"graveler-import-{job.id}", daemon=True).start()
        return job

    def status(self, import_id: str) -> ImportJob:
        """The import as it stands; an active one that lost its runner is settled first
        (see the module docstring). Raises NotFound (also for another repository's)."""
        job = self._get(import_id)
        cutoff = _now() - timedelta(seconds=lease_seconds())
        if job.state.active and job.heartbeat < cutoff:
            self._settle(job, cutoff)
            job = self._get(import_id)
        return job

    def cancel(self, import_id: str) -> ImportJob:
        """Stop a running import; returns it. Conflict when it completed or is committing;
        an import that failed or was canceled already stays as it is."""
        job = self.status(import_id)
        if job.state is ImportState.RUNNING:
            job = self.store.cancel(import_id, _now(), CANCELED)
        if job.state is ImportState.COMPLETED:
            raise Conflict(f"import {import_id} has already completed")
        if job.state is ImportState.COMMITTING:
            raise Conflict(f"import {import_id} is committing: it can no longer be canceled")
        return job

    def wait(self, import_id: str, timeout: float | None = None, poll: float = 0.2) -> ImportJob:
        """Poll until the import is final (completed, failed, canceled); returns it. Raises
        TimeoutError after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = self.status(import_id)
            if not job.state.active:
                return job
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"import {import_id} is still {job.state.value}")
            time.sleep(poll)

    def _get(self, import_id: str) -> ImportJob:
        if not isinstance(import_id, str) or not import_id.isalnum() or len(import_id) > 64:
            raise NotFound(f"no import {str(import_id)[:40]!r}")
        job = self.store.get(import_id)
        if job.repo != self.repo.name:
            raise NotFound(f"no import {import_id!r} in repository {self.repo.name!r}")
        return job

    def _settle(self, job: ImportJob, cutoff: datetime) -> None:
        """Give an import whose runner stopped its final state: completed when the commit it
        claimed is recorded (commits are recorded with the branch move), else failed."""
        landed = self._landed(job.commit_id)
        if landed is not None:
            fields = {"commit_id": landed.id, "metarange_id": landed.metarange_id}
            self.store.finish(job.id, ImportState.COMPLETED, _now(), stale_before=cutoff, **fields)
            return
        error = (
            f"the import stopped: no sign of life from its runner since "
            f"{job.heartbeat.isoformat(timespec='seconds')} (the process running it "
            "ended?); nothing was committed"
        )
        self.store.finish(job.id, ImportState.FAILED, _now(), stale_before=cutoff, error=error)

    def _landed(self, commit_id: str | None) -> Commit | None:
        if not commit_id:
            return None
        try:
            return self.repo.get_commit(commit_id)
        except NotFound:
            return None


class _Runner:
    """Runs one import on its thread, with a heartbeat beside it."""

    def __init__(
        self, repo: RepoContext, store: SqlImportStore, import_id: str, request: _Request
    ) -> None:
        self.repo, self.store, self.id, self.request = repo, store, import_id, request
        self.ingested = 0
        self.stop = threading.Event()  # set when the import was canceled or settled
        self.done = threading.Event()

    def run(self) -> None:
        beat = threading.Thread(target=self._beat, name=f"{self.id}-beat", daemon=True)
        beat.start()
        try:
            self._import()
        finally:
            self.done.set()
            beat.join()

    def _import(self) -> None:
        r = self.request
        control = ImportControl(self._progress, self.stop.is_set, self._claim)
        try:
            result = import_data(
                self.repo,
                r.branch,
                r.sources,
                message=r.message,
                metadata=r.metadata,
                committer=r.committer,
                control=control,
            )
        except ImportCanceled:
            self._finish(ImportState.CANCELED, error=CANCELED)
        except GravelerError as exc:
            self._finish(ImportState.FAILED, error=str(exc) or type(exc).__name__)
        except Exception as exc:  # reported in the status, never lost in a thread
            log.exception("import %s failed", self.id)
            self._finish(ImportState.FAILED, error=f"internal error: {type(exc).__name__}")
        else:
            commit = result.commit
            ids = {"commit_id": commit.id, "metarange_id": commit.metarange_id}
            self._finish(ImportState.COMPLETED, ingested=self.ingested, **ids)

    def _progress(self, ingested: int) -> None:
        self.ingested = ingested

    def _claim(self, proposed: Commit) -> None:
        if not self.store.claim_commit(self.id, proposed.id, _now()):
            raise ImportCanceled(f"import {self.id} was canceled before it committed")

    def _finish(self, state: ImportState, **fields: Any) -> None:
        try:
            self.store.finish(self.id, state, _now(), **fields)
        except GravelerError:  # the database is gone: the lease settles it later
            log.exception("import %s: recording its end failed", self.id)

    def _beat(self) -> None:
        every = beat_seconds()
        while not self.done.wait(every):
            try:
                job = self.store.beat(self.id, self.ingested, _now())
            except GravelerError:
                log.warning("import %s: heartbeat failed", self.id, exc_info=True)
                continue
            if not job.state.active:
                self.stop.set()
