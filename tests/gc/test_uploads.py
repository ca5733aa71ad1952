"""Garbage collection and multipart uploads: parts of an upload in progress are never swept,
uploads unfinished past their expiry are aborted, and part files whose upload is gone are
deleted once out of the grace period."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graveler.maintenance.gc import collect_garbage
from graveler.repository import Repository
from graveler.versioning.multipart import DEFAULT_EXPIRY, UPLOADS_PREFIX


def _parts(repo: Repository) -> list[str]:
    return [o.key for o in repo.store.list(UPLOADS_PREFIX)]


def test_parts_of_live_uploads_survive_gc(repo: Repository):
    upload = repo.multipart.create("main", "big.bin")
    repo.multipart.upload_part(upload.upload_id, 1, b"x" * 100)
    later = datetime.now(UTC) + timedelta(days=3)  # past the grace period, within the expiry
    report = collect_garbage(repo, now=later)
    assert report.uploads_expired == 0 and report.orphan_parts == 0
    assert len(_parts(repo)) == 1
    assert repo.multipart.parts(upload.upload_id)[0].size == 100


def test_expired_uploads_are_aborted_and_their_parts_go(repo: Repository):
    old = repo.multipart.create("main", "old.bin")
    repo.multipart.upload_part(old.upload_id, 1, b"o" * 10)
    late = datetime.now(UTC) + DEFAULT_EXPIRY + timedelta(hours=1)
    dry = collect_garbage(repo, now=late, dry_run=True)
    assert dry.uploads_expired == 1 and len(_parts(repo)) == 1  # a dry run changes nothing
    report = collect_garbage(repo, now=late)
    assert report.uploads_expired == 1
    assert _parts(repo) == []
    assert repo.multipart.list() == []
    assert report.to_dict()["uploads_expired"] == 1


def test_orphaned_part_files_are_deleted_after_the_grace_period(repo: Repository):
    repo.store.put(f"{UPLOADS_PREFIX}{'ab' * 24}/00001-0011223344556677", b"left behind")
    live = repo.multipart.create("main", "live.bin")
    repo.multipart.upload_part(live.upload_id, 1, b"l")
    assert collect_garbage(repo).orphan_parts == 0  # still in its grace period
    report = collect_garbage(repo, now=datetime.now(UTC) + timedelta(days=2))
    assert report.orphan_parts == 1
    assert [k.split("/")[2] for k in _parts(repo)] == [live.upload_id]
