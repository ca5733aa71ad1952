"""Three-dot diffs (lakeFS's compare): what merging the right ref into the left one would
change on the left, and the paths both sides changed differently since the merge base, as
conflicts; the rules of lakeFS's compare iterator, case by case (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from graveler import ChangeType
from graveler.core.errors import MergeConflict, NotFound


def test_every_case_against_the_merge_base(repo):
    for path in (
        "same",
        "left-changes",
        "right-changes",
        "both-alike",
        "both-differ",
        "left-removes",
        "right-removes",
        "left-removes-right-changes",
        "left-changes-right-removes",
        "both-remove",
    ):
        repo.put("main", path, b"base " + path.encode())
    repo.commit("main", "base")
    repo.create_branch("right", "main")
    edits = {
        "main": {
            "left-changes": b"L",
            "both-alike": b"same",
            "both-differ": b"L",
            "left-changes-right-removes": b"L",
            "added-both-differ": b"L",
            "added-both-alike": b"A",
            "left-adds": b"L",
        },
        "right": {
            "right-changes": b"R",
            "both-alike": b"same",
            "both-differ": b"R",
            "left-removes-right-changes": b"R",
            "added-both-differ": b"R",
            "added-both-alike": b"A",
            "right-adds": b"R",
        },
    }
    removals = {
        "main": ["left-removes", "left-removes-right-changes", "both-remove"],
        "right": ["right-removes", "left-changes-right-removes", "both-remove"],
    }
    for branch in ("main", "right"):
        for path, data in edits[branch].items():
            repo.put(branch, path, data)
        repo.delete_many(branch, removals[branch])
        repo.commit(branch, f"{branch} edits")
    found = {d.path: d.type for d in repo.diff_three_dot("main", "right")}
    assert found == {
        "right-changes": ChangeType.CHANGED,
        "right-removes": ChangeType.REMOVED,
        "right-adds": ChangeType.ADDED,
        "both-differ": ChangeType.CONFLICT,
        "added-both-differ": ChangeType.CONFLICT,
        "left-removes-right-changes": ChangeType.CONFLICT,
        "left-changes-right-removes": ChangeType.CONFLICT,
    }
    conflict = next(d for d in repo.diff_three_dot("main", "right") if d.path == "both-differ")
    assert conflict.left is not None and conflict.right is not None
    with pytest.raises(MergeConflict) as merged:  # the merge meets exactly these conflicts
        repo.merge("right", "main")
    conflicts = {p for p, t in found.items() if t is ChangeType.CONFLICT}
    assert set(merged.value.keys) == conflicts


def test_pages_and_prefixes(repo):
    repo.put("main", "d/a", b"0")
    repo.commit("main", "base")
    repo.create_branch("right", "main")
    for path in ("d/a", "d/b", "e/c"):
        repo.put("right", path, b"R")
    repo.commit("right", "right")
    repo.put("main", "d/a", b"L")
    repo.commit("main", "left")
    assert [(d.path, d.type.value) for d in repo.diff_three_dot("main", "right")] == [
        ("d/a", "conflict"),
        ("d/b", "added"),
        ("e/c", "added"),
    ]
    assert [d.path for d in repo.diff_three_dot("main", "right", prefix="d/", after="d/a")] == [
        "d/b"
    ]


def test_unrelated_refs_have_no_three_dot_diff(gv, repo, tmp_path):
    repo.put("main", "a", b"1")
    repo.commit("main", "a")
    repo.create_branch("b", "main")
    assert list(repo.diff_three_dot("b", "main")) == []
    other = gv.create_repository("other", (tmp_path / "other").as_uri())
    other.put("main", "x", b"1")
    first = other.commit("main", "x")
    with pytest.raises(NotFound):  # a commit of another repository: not found here
        list(repo.diff_three_dot("main", first.id))
