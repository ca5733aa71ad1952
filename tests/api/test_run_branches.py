"""Kept run branches: what a replayed publish leaves behind, and pruning idle run branches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graveler import Run
from graveler.core.errors import BranchNotFound, InvalidArgument
from graveler.core.model import Branch
from graveler.versioning import runs
from graveler.views.layers import new_staging_token, token_issued_at

LATER = timedelta(days=8)


def names(found: list[runs.StaleBranch]) -> list[str]:
    return sorted(b.name for b in found)


def test_a_cleared_run_that_rewrites_the_same_bytes_leaves_no_branch(repo):
    """A cleared run forks its new branch from the target's newer head and writes what it
    wrote before: nothing of it is unpublished, so the replay removes the branch."""
    run = Run("airflow/etl/r1", "airflow-etl-r1", "main")
    runs.open_run(repo, run)
    repo.put(run.branch, "t/a.csv", b"same")
    first = runs.publish(repo, run, "Merge r1")
    repo.put("main", "other.csv", b"a newer run")
    repo.commit("main", "a newer run")
    runs.open_run(repo, run)
    repo.put(run.branch, "t/a.csv", b"same")
    replay = runs.publish(repo, run, "Merge r1")
    assert replay.replayed and not replay.branch_kept
    assert replay.merge is not None and first.merge is not None
    assert replay.merge.commit == first.merge.commit
    with pytest.raises(BranchNotFound):
        repo.branch(run.branch)


def test_a_cleared_run_with_its_own_commit_keeps_its_branch(repo):
    run = Run("airflow/etl/r2", "airflow-etl-r2", "main")
    runs.open_run(repo, run)
    repo.put(run.branch, "t/a.csv", b"v1")
    runs.publish(repo, run, "Merge r2")
    runs.open_run(repo, run)
    repo.put(run.branch, "t/a.csv", b"v2")
    repo.commit(run.branch, "the cleared run committed different data")
    replay = runs.publish(repo, run, "Merge r2")
    assert replay.replayed and replay.branch_kept
    assert repo.get(run.branch, "t/a.csv") == b"v2"


def test_tokens_carry_their_issue_time():
    before = datetime.now(UTC) - timedelta(milliseconds=2)
    token = new_staging_token("lake", "team/feature")
    issued = token_issued_at(token)
    assert issued is not None and before <= issued <= datetime.now(UTC)
    assert len(token.rsplit("/", 1)[1]) == 32  # as long as the uuid4 hex it replaces
    assert token_issued_at("lake/main/" + "0" * 32) is None  # older tokens: no time
    assert token_issued_at("lake/main/zzzzzzzzzzzz-0") is None


def test_prune_deletes_idle_run_branches_only(repo):
    repo.create_branch("airflow-etl-old", "main")
    repo.put("airflow-etl-old", "kept.csv", b"from a failed run")
    repo.create_branch("airflow-etl-protected", "main")
    repo.protect_branch("airflow-etl-protected")
    repo.create_branch("feature", "main")
    repo.create_branch("dagster-run-1", "main")
    now = datetime.now(UTC) + LATER

    dry = runs.prune(repo, prefix="airflow-", older_than=timedelta(days=7), now=now, dry_run=True)
    assert names(dry) == ["airflow-etl-old"]
    assert repo.branch("airflow-etl-old")  # a dry run deletes nothing
    assert runs.prune(repo, prefix="airflow-", older_than=timedelta(days=9), now=now) == []

    deleted = runs.prune(repo, prefix="airflow-", older_than=timedelta(days=7), now=now)
    assert names(deleted) == ["airflow-etl-old"]
    assert {b.name for b in repo.list_branches()} == {
        "main",
        "airflow-etl-protected",
        "feature",
        "dagster-run-1",
    }
    head = repo.get_commit(deleted[0].commit_id)  # its commits stay readable by ID
    assert head.id == repo.branch("main").commit_id


def test_a_commit_restarts_the_idle_time(repo):
    repo.create_branch("airflow-etl-a", "main")
    created = runs.stale_branches(
        repo, prefix="airflow-", older_than=timedelta(0), now=datetime.now(UTC) + LATER
    )[0].idle_since
    repo.put("airflow-etl-a", "x", b"x")
    repo.commit("airflow-etl-a", "work")
    [found] = runs.stale_branches(
        repo, prefix="airflow-", older_than=timedelta(0), now=datetime.now(UTC) + LATER
    )
    assert found.idle_since > created
    horizon = found.idle_since + timedelta(seconds=1)
    assert runs.prune(repo, prefix="airflow-", older_than=timedelta(seconds=2), now=horizon) == []


def test_prune_leaves_a_branch_used_after_it_was_listed(repo, monkeypatch):
    repo.create_branch("airflow-etl-busy", "main")
    real = runs.stale_branches

    def listed_then_used(*args, **kwargs):
        found = real(*args, **kwargs)
        repo.put("airflow-etl-busy", "x", b"x")
        repo.commit("airflow-etl-busy", "the run resumed")
        return found

    monkeypatch.setattr(runs, "stale_branches", listed_then_used)
    now = datetime.now(UTC) + LATER
    assert runs.prune(repo, prefix="airflow-", older_than=timedelta(days=1), now=now) == []
    assert repo.branch("airflow-etl-busy")


def test_a_token_without_a_time_falls_back_to_the_head_commit(repo):
    old = Branch("airflow-legacy", repo.branch("main").commit_id, "lake/airflow-legacy/" + "a" * 32)
    repo.refs.create_branch(repo.name, old)
    [found] = runs.stale_branches(
        repo, prefix="airflow-", older_than=timedelta(0), now=datetime.now(UTC) + LATER
    )
    assert found.idle_since == repo.get_commit(old.commit_id).creation_date


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("7d", timedelta(days=7)),
        ("12h", timedelta(hours=12)),
        (" 30M ", timedelta(minutes=30)),
        ("90", timedelta(seconds=90)),
        ("2w", timedelta(weeks=2)),
        ("1.5h", timedelta(minutes=90)),
        (3600, timedelta(hours=1)),
        (timedelta(days=1), timedelta(days=1)),
    ],
)
def test_parse_age(given, expected):
    assert runs.parse_age(given) == expected


@pytest.mark.parametrize("bad", ["", "d", "seven days", "-1d", "1y", True, "1e400d"])
def test_parse_age_refuses_bad_values(bad):
    with pytest.raises(InvalidArgument):
        runs.parse_age(bad)


def test_prune_needs_a_prefix(repo):
    with pytest.raises(InvalidArgument, match="prefix"):
        runs.prune(repo, prefix="", older_than=timedelta(days=1))
