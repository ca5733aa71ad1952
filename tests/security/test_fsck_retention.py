"""fsck knows retention: objects of commits that garbage collection expired are reported as
expired, not as problems; a missing object of a retained commit is still a problem.

Reproduced before the fix: once GC removed expired commits' objects, as documented, fsck
reported each one as ``missing-object`` and exited 1 for ever after.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from graveler.cli import main
from graveler.client import Graveler
from graveler.maintenance.fsck import ProblemKind, fsck
from graveler.maintenance.gc import RetentionRules, collect_garbage
from graveler.repository import Repository

RULES = RetentionRules(default_days=7)


def history(repo: Repository) -> tuple[list[str], str, object]:
    """Three versions of two objects; returns the addresses only the first commit needs, the
    address the head needs, and the time at which the head is 30 days old."""
    old = [repo.put("main", p, f"{p} v1".encode()).physical_address for p in ("a", "b")]
    repo.commit("main", "v1")
    repo.put("main", "a", b"a v2")
    repo.commit("main", "v2")
    b3 = repo.put("main", "b", b"b v3")
    head = repo.commit("main", "v3")
    return old, b3.physical_address, head.creation_date + timedelta(days=30)


def test_fsck_after_gc_reports_expired_objects_not_problems(
    repo: Repository, gv: Graveler, capsys: pytest.CaptureFixture[str]
) -> None:
    expired, _, later = history(repo)
    done = collect_garbage(repo, RULES, grace=timedelta(0), now=later)
    assert {o.key for o in done.selected} >= set(expired) and done.deleted
    report = fsck(repo)
    assert report.clean, report.problems
    assert sorted(report.expired_objects) == sorted(expired)
    assert report.expired_commits >= 1
    args = ["--home", str(gv.home), "--database-url", gv.database_url]
    assert main([*args, "fsck", "graveler://lake"]) == 0
    assert "deleted by garbage collection (not a problem)" in capsys.readouterr().out


def test_a_missing_object_of_a_retained_commit_is_still_a_problem(repo: Repository) -> None:
    expired, retained, later = history(repo)
    collect_garbage(repo, RULES, grace=timedelta(0), now=later)
    repo.store.delete(retained)  # lost, not collected: the head needs it
    report = fsck(repo)
    assert not report.clean
    assert [(p.kind, p.subject) for p in report.problems] == [
        (ProblemKind.MISSING_OBJECT, retained)
    ]
    assert sorted(report.expired_objects) == sorted(expired)


def test_without_a_gc_run_a_missing_object_is_a_problem(repo: Repository) -> None:
    expired, _, _ = history(repo)
    repo.store.delete(expired[0])  # an old commit's object, but nothing expired it
    report = fsck(repo)
    assert [p.kind for p in report.problems] == [ProblemKind.MISSING_OBJECT]
    assert report.expired_objects == []
