"""graveler.versioning.runs: the run-branch lifecycle, published exactly once per run."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from graveler import Run
from graveler.core.errors import BranchNotFound, MergeConflict
from graveler.versioning import runs


def merges_of(repo, run: Run) -> list:
    return [
        c
        for c in repo.log("main", first_parent=True)
        if c.metadata.get(runs.RUN_KEY) == run.identity
    ]


def write(repo, run: Run, path: str, data: bytes) -> None:
    runs.open_run(repo, run)
    repo.put(run.branch, path, data)


def test_a_run_opens_writes_and_publishes_into_its_target(repo):
    run = Run("airflow/etl/r1", "run-r1", "main")
    branch, created = runs.open_run(repo, run)
    again, created_again = runs.open_run(repo, run)
    assert created and not created_again and again.commit_id == branch.commit_id
    repo.put(run.branch, "t/a.csv", b"a")
    pub = runs.publish(repo, run, "Merge run r1", metadata={"dag": "etl"})
    assert pub.merge is not None and not pub.replayed
    merge = pub.merge.commit
    assert repo.branch("main").commit_id == merge.id and len(merge.parents) == 2
    assert merge.metadata == {
        "dag": "etl",
        runs.RUN_KEY: run.identity,
        ".lakefs.merge.strategy": "default",
    }
    assert pub.merge.before.id == merge.parents[0]
    assert repo.get("main", "t/a.csv") == b"a"
    with pytest.raises(BranchNotFound):
        repo.branch(run.branch)


def test_publishing_again_replays_the_first_publication(repo):
    run = Run("r2", "run-r2", "main")
    write(repo, run, "x", b"1")
    first = runs.publish(repo, run, "Merge r2")
    repo.put("main", "later", b"l")  # the target moves on
    repo.commit("main", "later work")
    second = runs.publish(repo, run, "Merge r2")
    assert second.replayed and second.merge is not None
    assert second.merge.commit == first.merge.commit and second.merge.before == first.merge.before
    assert len(merges_of(repo, run)) == 1


def test_a_cleared_run_that_writes_again_is_not_merged_twice_and_keeps_its_writes(repo):
    run = Run("r3", "run-r3", "main")
    write(repo, run, "x", b"old")
    runs.publish(repo, run, "Merge r3", strategy="source-wins")
    repo.put("main", "x", b"newer run")
    repo.commit("main", "a newer run")
    write(repo, run, "x", b"old again")  # the cleared run recreates its branch and writes
    replay = runs.publish(repo, run, "Merge r3", strategy="source-wins")
    assert replay.replayed and replay.branch_kept
    assert repo.get("main", "x") == b"newer run"  # old data did not come back
    assert repo.get(run.branch, "x") == b"old again"  # nothing the run wrote is lost
    explicit = runs.publish(repo, run, "Merge r3 again", strategy="source-wins", again=True)
    assert explicit.merge is not None and not explicit.replayed
    assert repo.get("main", "x") == b"old again" and len(merges_of(repo, run)) == 2


def test_a_replay_removes_a_leftover_branch_that_holds_nothing_new(repo):
    run = Run("r4", "run-r4", "main")
    write(repo, run, "x", b"1")
    runs.publish(repo, run, "Merge r4", keep_branch=True)
    assert repo.branch(run.branch)
    replay = runs.publish(repo, run, "Merge r4")
    assert replay.replayed and not replay.branch_kept
    with pytest.raises(BranchNotFound):
        repo.branch(run.branch)


def test_nothing_to_publish(repo):
    never_opened = Run("r5", "run-r5", "main")
    assert runs.publish(repo, never_opened, "m") == runs.Publication(never_opened, None)
    empty = Run("r6", "run-r6", "main")
    runs.open_run(repo, empty)
    pub = runs.publish(repo, empty, "m")
    assert pub.merge is None and not pub.replayed
    with pytest.raises(BranchNotFound):
        repo.branch(empty.branch)


def test_a_conflict_keeps_the_branch_and_says_so(repo):
    repo.put("main", "k", b"base")
    repo.commit("main", "base")
    run = Run("r7", "run-r7", "main")
    write(repo, run, "k", b"run")
    repo.put("main", "k", b"main")
    repo.commit("main", "main moved")
    head = repo.branch("main").commit_id
    with pytest.raises(MergeConflict) as info:
        runs.publish(repo, run, "Merge r7")
    assert any("kept on branch 'run-r7'" in note for note in info.value.__notes__)
    assert repo.branch("main").commit_id == head and repo.get(run.branch, "k") == b"run"


def test_the_search_is_bounded_by_the_runs_start(repo):
    run = Run("r8", "run-r8", "main")
    write(repo, run, "x", b"1")
    runs.publish(repo, run, "Merge r8")
    assert runs.find_publication(repo, run) is not None
    future = datetime.now(UTC) + runs.CLOCK_SKEW + timedelta(minutes=5)
    assert runs.find_publication(repo, run, since=future) is None
    assert runs.find_publication(repo, run, depth=0) is None


def test_concurrent_publishes_of_one_run_merge_once(repo):
    run = Run("r9", "run-r9", "main")
    write(repo, run, "x", b"1")
    results: list[runs.Publication] = []
    errors: list[BaseException] = []

    def attempt() -> None:
        try:
            results.append(runs.publish(repo, run, "Merge r9"))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=attempt) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(merges_of(repo, run)) == 1
    assert {r.merge.commit.id for r in results if r.merge is not None} == {
        merges_of(repo, run)[0].id
    }


def test_transactions_run_on_the_lifecycle(repo):
    with repo.transaction("main", message="tx") as tx:
        tx.put("t.csv", b"1")
    assert tx.commit is not None and tx.commit.metadata[runs.RUN_KEY].startswith("transaction/")
    assert repo.get("main", "t.csv") == b"1"
    with pytest.raises(BranchNotFound):
        repo.branch(tx.branch)


def test_retire_deletes_a_branch_only_when_a_publication_contains_it(repo):
    """A failed attempt's branch, continued by a re-execution that published: retired once
    the publication contains it, kept while it holds anything else."""
    failed = Run("dagster/parent", "run-parent", "main")
    write(repo, failed, "a", b"from the failed run")
    repo.commit(failed.branch, "the failed run's output")
    child = Run("dagster/child", "run-child", "main")
    runs.open_run(repo, child, source=failed.branch)
    repo.put(child.branch, "b", b"from the re-execution")
    pub = runs.publish(repo, child, "Merge child")
    assert pub.merge is not None and repo.get("main", "a") == b"from the failed run"

    other = Run("dagster/other", "run-other", "main")
    write(repo, other, "c", b"never published")
    repo.commit(other.branch, "unrelated")
    assert not runs.retire(repo, other, pub.merge.commit)  # not contained: kept
    staged = Run("dagster/staged", "run-staged", "main")
    runs.open_run(repo, staged, source=failed.branch)
    repo.put(staged.branch, "late", b"staged, never committed")
    assert not runs.retire(repo, staged, pub.merge.commit)  # staged writes: kept
    assert runs.retire(repo, failed, pub.merge.commit)
    assert not runs.retire(repo, failed, pub.merge.commit)  # gone: nothing to do
    assert {b.name for b in repo.list_branches()} == {"main", other.branch, staged.branch}


def test_publish_with_lakectl_merge_options(repo):
    """squash: one commit over the target's head, the run recorded (and replayed) all the
    same; ff_only: refused when the target moved, the branch kept; allow_empty: a run that
    wrote nothing is still recorded by a merge commit."""
    from graveler.core.errors import InvalidArgument, NotFastForward

    squashed = Run("r-squash", "run-squash", "main")
    write(repo, squashed, "s", b"1")
    head = repo.branch("main").commit_id
    pub = runs.publish(repo, squashed, "Merge squashed", squash=True)
    assert pub.merge is not None and pub.merge.commit.parents == (head,)
    assert pub.merge.commit.metadata[runs.RUN_KEY] == squashed.identity
    assert runs.publish(repo, squashed, "Merge squashed", squash=True).replayed

    strict = Run("r-ff", "run-ff", "main")
    write(repo, strict, "f", b"1")
    repo.put("main", "moved", b"m")
    repo.commit("main", "the target moves on")
    with pytest.raises(NotFastForward) as refused:
        runs.publish(repo, strict, "Merge ff", ff_only=True)
    assert any("kept on branch 'run-ff'" in note for note in refused.value.__notes__)
    assert repo.branch(strict.branch)  # kept
    with pytest.raises(InvalidArgument):
        runs.publish(repo, strict, "Merge ff", ff_only=True, squash=True)

    idle = Run("r-empty", "run-empty", "main")
    runs.open_run(repo, idle)
    assert runs.publish(repo, idle, "Merge idle").merge is None
    runs.open_run(repo, idle)
    pub = runs.publish(repo, idle, "Merge idle", allow_empty=True, fast_forward=True)
    assert pub.merge is not None and not pub.merge.fast_forward
    assert pub.merge.commit.metadata[runs.RUN_KEY] == idle.identity
    assert len(merges_of(repo, idle)) == 1
