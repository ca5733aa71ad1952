"""lakectl's merge options (``--no-ff``, ``--ff-only``, ``--squash``, ``--meta``,
``--allow-empty``) through the Python API and the CLI, and lakeFS's merge test cases ported as
behaviour: squashing, merging a branch with no changes, a destination with a modifier, the
diff of a merge with its parent, and lakectl's merge with a message and metadata."""

from __future__ import annotations

import json

import pytest

from graveler.cli import main
from graveler.core.errors import (
    DirtyBranch,
    InvalidArgument,
    InvalidRef,
    NoChanges,
    NotFastForward,
)


def _branch_with_commits(repo, name: str, count: int) -> list[str]:
    repo.create_branch(name, "main")
    ids = []
    for n in range(1, count + 1):
        repo.put(name, f"foo/bar{n}", b"x" * n)
        ids.append(repo.commit(name, "some message").id)
    return ids


def _advance(repo, branch: str, path: str) -> str:
    repo.put(branch, path, path.encode())
    return repo.commit(branch, f"{branch} moves on").id


def _diverge(repo) -> None:
    """``dev`` (made now) and ``main`` each gain a commit the other lacks."""
    _branch_with_commits(repo, "dev", 1)
    _advance(repo, "main", "on-main")


# --- lakeFS's cases -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "options", "expected"),
    [
        ("regular", {"fast_forward": False}, 3 + 2),  # created, 3 on the branch, the merge
        ("squash", {"squash": True}, 2),  # created, one squash commit
        # lakeFS always makes a merge commit (5); graveler's default fast-forwards (4)
        ("default", {}, 3 + 1),
    ],
)
def test_merge_squashing(repo, name, options, expected):
    # Ported from lakeFS's TestController_MergeSquashing.
    _branch_with_commits(repo, "branch", 3)
    repo.create_branch(f"main-{name}", "main")
    merged = repo.merge("branch", f"main-{name}", **options)
    assert len(list(repo.log(f"main-{name}"))) == expected
    assert repo.get(f"main-{name}", "foo/bar3") == b"xxx"
    parents = len(merged.commit.parents)
    assert parents == {"regular": 2, "squash": 1, "default": 1}[name]
    assert merged.fast_forward == (name == "default")


def test_merge_branch_with_no_changes(repo):
    # Ported from lakeFS's TestController_MergeBranchWithNoChanges.
    repo.create_branch("branch1", "main")
    repo.create_branch("branch2", "main")
    with pytest.raises(NoChanges):
        repo.merge("branch2", "branch1", message="Merge branch2 to branch1")
    head = repo.branch("branch1").commit_id
    merged = repo.merge("branch2", "branch1", message="Merge branch2 to branch1", allow_empty=True)
    assert merged.commit.message == "Merge branch2 to branch1" and not merged.fast_forward
    assert merged.commit.parents == (head,)  # source and destination were one commit
    assert merged.commit.metarange_id == repo.get_commit(head).metarange_id
    assert repo.branch("branch1").commit_id == merged.commit.id


@pytest.mark.parametrize("modifier", ["$", "@"])
def test_merge_into_a_branch_with_a_modifier_is_refused(repo, modifier):
    # Ported from lakeFS's TestController_MergeIntoExplicitBranch (a 400 there).
    _branch_with_commits(repo, "branch1", 1)
    before = repo.branch("main").commit_id
    with pytest.raises(InvalidRef, match="destination is a branch name"):
        repo.merge("branch1", "main" + modifier)
    assert repo.branch("main").commit_id == before


def test_merge_diff_with_parent(repo):
    # Ported from lakeFS's TestController_MergeDiffWithParent (lakeFS always makes the commit).
    repo.create_branch("work", "main")
    repo.put("work", "file1", b"awesome content")
    repo.commit("work", "file 1 commit to work")
    repo.merge("work", "main", message="merge work to main", fast_forward=False)
    assert [(d.type, d.path) for d in repo.diff("main~1", "main")] == [("added", "file1")]


def test_merge_dirty_branch(repo):
    # Ported from lakeFS's TestController_MergeDirtyBranch, with every option.
    repo.put("main", "foo/bar1", b"1")
    _branch_with_commits(repo, "branch1", 1)
    for options in ({}, {"fast_forward": False}, {"squash": True}, {"allow_empty": True}):
        with pytest.raises(DirtyBranch):
            repo.merge("branch1", "main", **options)


@pytest.mark.parametrize("squash", [False, True], ids=["regular", "squash"])
def test_lakectl_merge_with_message_and_meta(repo, tmp_path, capsys, squash):
    # Ported from lakeFS's esti TestLakectlMerge: merge with -m and --meta (regular and
    # --squash) into a branch made before the source's commits, then log --amount 1.
    # lakectl always makes a merge commit: graveler does so with --no-ff (by default it would
    # fast-forward here). lakectl's --meta takes comma-separated pairs; graveler's one pair.
    home = str(repo.settings.home)
    url = repo.settings.database_url
    repo.create_branch("dest", "main")
    repo.create_branch("feature", "main")
    for path, text in (("file1", "one"), ("file2", "two")):
        repo.put("feature", path, text.encode())
        repo.commit("feature", f"upload {path}")
    args = ["--home", home, "--database-url", url, "--json"]
    merge = ["merge", "graveler://lake/feature", "graveler://lake/dest", "-m", "merge commit"]
    meta = ["--meta", "key1=value1", "--meta", "key2=value2"]
    assert main([*args, *merge, *meta, "--squash" if squash else "--no-ff"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert main([*args, "log", "graveler://lake/dest", "--amount", "1"]) == 0
    (logged,) = json.loads(capsys.readouterr().out)
    assert logged == done
    assert logged["message"] == "merge commit"
    assert {k: v for k, v in logged["metadata"].items() if k.startswith("key")} == {
        "key1": "value1",
        "key2": "value2",
    }
    assert len(logged["parents"]) == (1 if squash else 2)
    assert repo.get("dest", "file2") == b"two"


# --- graveler's option semantics ------------------------------------------------------------


def test_ff_only_fast_forwards_or_refuses(repo):
    ids = _branch_with_commits(repo, "dev", 2)
    merged = repo.merge("dev", "main", ff_only=True)
    assert merged.fast_forward and merged.commit.id == ids[-1]
    _advance(repo, "main", "on-main")
    _advance(repo, "dev", "on-dev")
    before = repo.branch("main").commit_id
    with pytest.raises(NotFastForward, match="--ff-only"):
        repo.merge("dev", "main", ff_only=True)
    assert repo.branch("main").commit_id == before
    with pytest.raises(NoChanges):  # already merged: nothing to do, even with --ff-only
        repo.merge("main~1", "main", ff_only=True)


def test_no_ff_and_squash_make_a_commit_when_a_fast_forward_was_possible(repo):
    _branch_with_commits(repo, "dev", 2)
    repo.create_branch("squashed", "main")
    head = repo.branch("main").commit_id
    merged = repo.merge("dev", "main", fast_forward=False, metadata={"run": "7"})
    assert merged.commit.parents == (head, repo.branch("dev").commit_id)
    assert merged.commit.metadata["run"] == "7"
    squashed = repo.merge("dev", "squashed", squash=True, message="squashed dev")
    assert squashed.commit.parents == (head,) and squashed.commit.message == "squashed dev"
    assert squashed.commit.metarange_id == merged.commit.metarange_id
    assert [c.message for c in repo.log("squashed")] == ["squashed dev", "Repository created"]


def test_squash_of_diverged_branches_keeps_one_parent_and_both_sides(repo):
    _diverge(repo)
    head = repo.branch("main").commit_id
    squashed = repo.merge("dev", "main", squash=True)
    assert squashed.commit.parents == (head,)
    assert repo.get("main", "foo/bar1") == b"x" and repo.get("main", "on-main") == b"on-main"
    assert repo.branch("dev").commit_id not in {c.id for c in repo.log("main")}


def test_allow_empty_records_an_already_merged_source(repo):
    ids = _branch_with_commits(repo, "dev", 1)
    repo.merge("dev", "main")
    with pytest.raises(NoChanges):
        repo.merge("dev", "main")
    again = repo.merge("dev", "main", allow_empty=True, metadata={"why": "audit"})
    assert again.commit.parents == (ids[0],)  # dev is main's head: one parent
    repo.put("main", "more", b"1")
    head = repo.commit("main", "more").id
    again = repo.merge("dev", "main", allow_empty=True)
    assert again.commit.parents == (head, ids[0])
    assert again.commit.metarange_id == repo.get_commit(head).metarange_id
    assert again.commit.metadata[".lakefs.merge.strategy"] == "default"


@pytest.mark.parametrize(
    "options",
    [
        {"ff_only": True, "fast_forward": False},
        {"ff_only": True, "squash": True},
        {"ff_only": True, "allow_empty": True},
        {"squash": "yes"},
    ],
)
def test_contradictory_options_are_refused_before_anything_happens(repo, options):
    _branch_with_commits(repo, "dev", 1)
    before = repo.branch("main").commit_id
    with pytest.raises(InvalidArgument):
        repo.merge("dev", "main", **options)
    assert repo.branch("main").commit_id == before


def test_cli_merge_options_and_exit_codes(repo, capsys):
    home = str(repo.settings.home)
    args = ["--home", home, "--database-url", repo.settings.database_url, "--json"]
    _branch_with_commits(repo, "dev", 1)

    def run(*more: str) -> tuple[int, str]:
        code = main([*args, "merge", "graveler://lake/dev", "graveler://lake/main", *more])
        out, err = capsys.readouterr()
        return code, out if code == 0 else err

    with pytest.raises(SystemExit) as usage:
        run("--no-ff", "--ff-only")
    assert usage.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
    code, err = run("--ff-only", "--squash")
    assert code == 2 and "--ff-only never makes a commit" in err
    code, err = run("--meta", "novalue")
    assert code == 2
    code, out = run("--no-ff", "--meta", "a=1", "--meta", "b=2")
    assert code == 0 and len(json.loads(out)["parents"]) == 2
    assert {"a": "1", "b": "2"}.items() <= json.loads(out)["metadata"].items()
    assert run()[0] == 4  # already merged: NoChanges
    code, out = run("--allow-empty")
    assert code == 0 and len(json.loads(out)["parents"]) == 2
    _advance(repo, "dev", "on-dev")
    _advance(repo, "main", "on-main")
    code, err = run("--ff-only")
    assert code == 4 and "cannot fast-forward" in err
