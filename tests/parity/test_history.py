"""Cherry-pick, revert with overrides and allow_empty, and hard reset."""

from __future__ import annotations

import pytest

from graveler.core.errors import (
    DirtyBranch,
    InvalidArgument,
    InvalidRef,
    MergeConflict,
    NoChanges,
    ObjectNotFound,
    ProtectedBranch,
)
from graveler.versioning.commit import _seal, update_branch


def _paths(repo, ref):
    return {e.path for e in repo.iter_objects(ref)}


@pytest.fixture
def picking(repo):
    """The repository of lakeFS TestController_CherryPick."""
    repo.put("main", "foo/bar1", b"1")
    repo.commit("main", "message1")
    for name in [
        "branch1",
        "branch2",
        "branch3",
        "branch4",
        *(f"dest-branch{i}" for i in range(1, 5)),
    ]:
        repo.create_branch(name, "main")
    repo.put("branch1", "foo/bar2", b"22")
    commit2 = repo.commit("branch1", "message2")
    repo.put("branch1", "foo/bar3", b"333")
    repo.put("branch1", "foo/bar4", b"4444")
    repo.commit("branch1", "message34")
    repo.put("branch2", "foo/bar6", b"6")
    repo.put("branch2", "foo/bar7", b"7")
    repo.commit("branch2", "message34")
    repo.put("branch3", "foo/bar8", b"8")
    repo.commit("branch3", "message8")
    repo.put("branch4", "foo/bar2", b"24 different")
    repo.commit("branch4", "message4")
    repo.merge("branch1", "branch3", message="merge message", metadata={"foo": "bar"})
    return repo, commit2


def test_cherry_pick(picking):
    # Ported from lakeFS pkg/api/controller_test.go TestController_CherryPick.
    repo, commit2 = picking
    # from branch
    repo.cherry_pick("dest-branch1", "branch1")
    assert _paths(repo, "dest-branch1") == {"foo/bar1", "foo/bar3", "foo/bar4"}
    # from commit
    repo.cherry_pick("dest-branch2", commit2.id, parent_number=1)
    assert _paths(repo, "dest-branch2") == {"foo/bar1", "foo/bar2"}
    # invalid parent id (too big, too small)
    for bad in (2, 0):
        with pytest.raises(InvalidArgument):
            repo.cherry_pick("dest-branch1", commit2.id, parent_number=bad)
    # dirty branch
    repo.create_branch("dirty", "main")
    repo.put("dirty", "foo/bar5", b"5")
    with pytest.raises(DirtyBranch):
        repo.cherry_pick("dirty", "branch1")
    # merge commit without a parent number
    with pytest.raises(InvalidArgument, match="parent_number"):
        repo.cherry_pick("dest-branch4", "branch3")
    # from branch - merge commit - first parent
    repo.cherry_pick("dest-branch4", "branch3", parent_number=1)
    assert _paths(repo, "dest-branch4") == {"foo/bar1", "foo/bar2", "foo/bar3", "foo/bar4"}
    # from branch - merge commit - second parent
    repo.cherry_pick("dest-branch3", "branch3", parent_number=2)
    assert _paths(repo, "dest-branch3") == {"foo/bar1", "foo/bar8"}
    # invalid parent id (too big) - merge commit
    with pytest.raises(InvalidArgument):
        repo.cherry_pick("dest-branch3", "branch3", parent_number=3)
    # conflict
    with pytest.raises(MergeConflict):
        repo.cherry_pick("branch4", commit2.id)


def test_cherry_pick_commit_fields(picking):
    # Ported from lakeFS pkg/graveler/graveler_v2_test.go TestGravelerCherryPick (override
    # commit fields, partially override, nil overrides).
    repo, commit2 = picking
    picked = repo.cherry_pick("dest-branch1", commit2.id, committer="tester")
    assert picked.parents == (repo.resolve("dest-branch1~1").commit.id,)
    assert picked.message == "message2" and picked.committer == "tester"
    assert picked.metadata == {
        "cherry-pick-origin": commit2.id,
        "cherry-pick-committer": commit2.committer,
    }
    repo.reset_hard("dest-branch1", "main")
    over = repo.cherry_pick(
        "dest-branch1", commit2.id, message="override message", metadata={"overrideKey": "v"}
    )
    assert over.message == "override message"
    assert over.metadata == {
        "overrideKey": "v",
        "cherry-pick-origin": commit2.id,
        "cherry-pick-committer": commit2.committer,
    }
    repo.reset_hard("dest-branch1", "main")
    partial = repo.cherry_pick("dest-branch1", commit2.id, metadata={"overrideKey": "v"})
    assert partial.message == "message2" and partial.metadata["overrideKey"] == "v"
    with pytest.raises(NoChanges):  # already applied
        repo.cherry_pick("dest-branch1", commit2.id)
    assert (
        repo.cherry_pick("dest-branch1", commit2.id, allow_empty=True).metarange_id
        == partial.metarange_id
    )


def test_cherry_pick_refuses_protected_and_staging_refs(picking):
    repo, commit2 = picking
    repo.protect_branch("dest-branch1")
    with pytest.raises(ProtectedBranch):
        repo.cherry_pick("dest-branch1", commit2.id)
    with pytest.raises(InvalidRef):
        repo.cherry_pick("dest-branch2", "branch1$")
    with pytest.raises(InvalidArgument):  # the first commit has no parent to measure against
        repo.cherry_pick("dest-branch2", list(repo.log("main"))[-1].id)


def test_revert_refs_and_errors(repo):
    # Ported from lakeFS pkg/api/controller_test.go TestController_Revert.
    repo.put("main", "foo/bar1", b"1")
    first = repo.commit("main", "some message")
    repo.revert("main", first.id)  # ref
    assert _paths(repo, "main") == set()
    repo.revert("main", "main")  # branch: revert the revert
    assert _paths(repo, "main") == {"foo/bar1"}
    repo.revert("main", "main@")  # committed
    assert _paths(repo, "main") == set()
    with pytest.raises(InvalidRef):
        repo.revert("main", "main$")  # staging
    repo.create_branch("dirty", "main")
    repo.put("dirty", "foo/bar2", b"2")
    with pytest.raises(DirtyBranch):  # dirty_branch
        repo.revert("dirty", first.id)
    # no changes: the repository's first (empty) commit; then with allow_empty
    initial = list(repo.log("main"))[-1]
    with pytest.raises(NoChanges, match="changes nothing"):
        repo.revert("main", initial.id)
    head = repo.revert("main", initial.id, allow_empty=True)
    assert head.metarange_id == repo.resolve("main~1").commit.metarange_id


def test_revert_merge_needs_a_parent(repo):
    # lakeFS TestController_Revert revert_no_parent.
    repo.put("main", "merge/foo/bar1", b"1")
    repo.commit("main", "first")
    repo.create_branch("branch1", "main")
    repo.put("branch1", "merge/foo/bar2", b"2")
    repo.commit("branch1", "second")
    merge = repo.merge("branch1", "main", fast_forward=False).commit
    with pytest.raises(InvalidArgument, match="parent_number"):
        repo.revert("main", merge.id)
    repo.revert("main", merge.id, parent_number=1)
    assert _paths(repo, "main") == {"merge/foo/bar1"}


def test_revert_conflict(repo):
    # Ported from lakeFS pkg/api/controller_test.go TestController_RevertConflict.
    repo.put("main", "foo/bar1", b"cksum1")
    first = repo.commit("main", "some message")
    repo.put("main", "foo/bar1", b"cksum2")
    repo.commit("main", "some other message")
    head = repo.branch("main").commit_id
    with pytest.raises(MergeConflict):
        repo.revert("main", first.id)
    assert repo.branch("main").commit_id == head


def test_revert_commit_fields(repo):
    # Ported from lakeFS pkg/graveler/graveler_v2_test.go TestGravelerRevert (override
    # commit fields, partially override, nil overrides).
    repo.put("main", "a", b"1")
    bad = repo.commit("main", "bad")
    plain = repo.revert("main", bad.id)
    assert plain.message == f"Revert {bad.id[:12]}: bad"
    assert plain.metadata == {".graveler.revert.commit": bad.id}
    repo.reset_hard("main", "main~1")
    over = repo.revert(
        "main",
        bad.id,
        message="override message",
        metadata={"originalKey": "overrideValue", "newKey": "newValue"},
    )
    assert over.message == "override message"
    assert over.metadata == {
        "originalKey": "overrideValue",
        "newKey": "newValue",
        ".graveler.revert.commit": bad.id,
    }
    repo.reset_hard("main", "main~1")
    partial = repo.revert("main", bad.id, metadata={"k": "v"})
    assert partial.message == plain.message and partial.metadata["k"] == "v"
    for bad_args in ({"message": ""}, {"metadata": {"": "x"}}, {"message": "m\x00"}):
        with pytest.raises(InvalidArgument):
            repo.revert("main", "main~1", **bad_args)


def test_hard_reset(repo):
    # Ported from lakeFS esti/rollback_test.go TestHardReset.
    repo.put("main", "1.txt", b"random")
    first = repo.commit("main", "resetAll")
    repo.commit("main", "another commit", allow_empty=True)
    assert repo.reset_hard("main", "main~").id == first.id
    assert repo.resolve("main").commit == first


def test_hard_reset_drops_staging_and_refuses_protected(repo):
    repo.put("main", "a", b"1")
    first = repo.commit("main", "one")
    repo.put("main", "b", b"2")
    repo.commit("main", "two")
    repo.put("main", "staged", b"3")
    repo.create_tag("v1", first.id)
    repo.reset_hard("main", "v1")
    assert _paths(repo, "main") == {"a"} and list(repo.diff_uncommitted("main")) == []
    with pytest.raises(ObjectNotFound):
        repo.get("main", "staged")
    for bad in ("main$", "main@1"):
        with pytest.raises(InvalidRef):
            repo.reset_hard("main", bad)
    repo.put("main", "sealed", b"4")
    update_branch(repo, "main", lambda b: _seal(repo.name, b))  # a commit in progress
    repo.reset_hard("main", "main")
    assert repo.branch("main").sealed_tokens == () and list(repo.diff_uncommitted("main")) == []
    repo.protect_branch("main")
    with pytest.raises(ProtectedBranch):
        repo.reset_hard("main", first.id)
