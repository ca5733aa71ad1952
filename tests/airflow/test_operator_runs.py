"""Operators' ``run`` on a real repository, without a DAG run: the head a merge landed on
(also for a fast-forward onto a merge commit), asset URIs checked before merging, and tag
retries."""

from __future__ import annotations

from types import SimpleNamespace

from graveler_airflow.operators.graveler import merge_with_lineage

CONTEXT = {
    "ti": SimpleNamespace(dag_id="d", run_id="r", task_id="t", try_number=1, log_url="http://x")
}


def _merge(repo, source: str, dest: str, fast_forward: bool):
    return merge_with_lineage(
        repo,
        CONTEXT,
        source=source,
        dest=dest,
        strategy=None,
        message=None,
        metadata=None,
        committer="tests",
        fast_forward=fast_forward,
    )


def test_before_is_the_old_head_for_a_fast_forward_onto_a_merge_commit(repo):
    main_before = repo.branch("main").commit_id
    repo.create_branch("feature", "main")
    repo.create_branch("side", "main")
    repo.put("side", "a", b"a")
    repo.commit("side", "a")
    repo.put("feature", "b", b"b")
    repo.commit("feature", "b")
    repo.merge("side", "feature")  # feature's head is now a merge commit
    merged = _merge(repo, "feature", "main", fast_forward=True)
    assert merged is not None and merged.commit.id == repo.branch("feature").commit_id
    assert len(merged.commit.parents) == 2 and merged.before.id == main_before


def test_before_is_the_first_parent_of_a_new_merge_commit(repo):
    main_before = repo.branch("main").commit_id
    repo.create_branch("feature", "main")
    repo.put("feature", "b", b"b")
    repo.commit("feature", "b")
    merged = _merge(repo, "feature", "main", fast_forward=False)
    assert merged is not None and merged.before.id == main_before
    assert merged.commit.parents == (main_before, repo.branch("feature").commit_id)


def test_a_branch_no_asset_uri_can_name_fails_before_the_merge(repo):
    """Asset events name the destination as graveler://repo/branch: a branch with '/' cannot
    be named, and the operator must refuse before merging, not after committing the merge."""
    import pytest
    from graveler_airflow.operators.graveler import GravelerMergeOperator

    from graveler.errors import InvalidURI

    repo.create_branch("team/main", "main")
    repo.create_branch("feature", "main")
    repo.put("feature", "b", b"b")
    repo.commit("feature", "b")
    before = repo.branch("team/main").commit_id
    op = GravelerMergeOperator(
        task_id="merge",
        repository=repo.name,
        source_ref="feature",
        destination_branch="team/main",
        emit_asset_events=True,
    )
    with pytest.raises(InvalidURI):
        op.run(repo, CONTEXT)
    assert repo.branch("team/main").commit_id == before


def test_tag_operator_accepts_its_own_tag_on_retry_only(repo):
    import pytest
    from graveler_airflow.operators.graveler import GravelerTagOperator

    from graveler.errors import AlreadyExists

    def tag(ref: str):
        op = GravelerTagOperator(
            task_id="t", repository=repo.name, tag="v1", ref=ref, exist_ok=True
        )
        return op.run(repo, CONTEXT)

    first = tag("main")
    assert tag("main") == first  # a retry finds its own tag
    repo.put("main", "x", b"x")
    repo.commit("main", "moves on")
    with pytest.raises(AlreadyExists):
        tag("main")  # the tag names another commit
