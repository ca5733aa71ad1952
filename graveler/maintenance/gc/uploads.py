"""Garbage collection of multipart uploads: uploads left unfinished past their expiry are
aborted, and part files whose upload is gone are deleted (after the grace period, as every
other object). Parts of uploads in progress live outside ``data/`` and are never swept."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from graveler.maintenance.gc.plan import DEFAULT_GRACE, GCReport
from graveler.versioning.multipart import DEFAULT_EXPIRY, expire_uploads, orphan_parts

if TYPE_CHECKING:
    from graveler.repository import Repository


def clean_uploads(
    repo: Repository,
    report: GCReport,
    *,
    expiry: timedelta = DEFAULT_EXPIRY,
    grace: timedelta = DEFAULT_GRACE,
    now: datetime | None = None,
) -> GCReport:
    """``report`` with the uploads cleaned up (nothing changes in a dry run); a repository
    handle without an upload store is left as it is."""
    if repo.parts.uploads is None:
        return report
    at = now or datetime.now(UTC)
    multipart = repo.multipart
    expired = expire_uploads(multipart, expiry, now=at, dry_run=report.dry_run)
    orphans = orphan_parts(multipart, at - grace)
    if not report.dry_run:
        for key in orphans:
            repo.store.delete(key)
    return replace(report, uploads_expired=expired, orphan_parts=len(orphans))
