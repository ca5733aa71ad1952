"""commit, log, merge, diff, revert, reset and transactions through the facade."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graveler.core.errors import DirtyBranch, InvalidArgument, MergeConflict, NoChanges


def test_commit_records_everything_and_log_follows_first_parents(repo):
    repo.put("main", "k", b"1")
    c1 = repo.commit("main", "first", metadata={"run": "42"}, committer="alice")
    assert c1.committer == "alice" and c1.metadata == {"run": "42"} and c1.generation == 2
    repo.put("main", "k", b"2")
    c2 = repo.commit("main", "second")
    assert [c.id for c in repo.log("main")][:2] == [c2.id, c1.id]
    assert [c.id for c in repo.log("main", amount=1)] == [c2.id]
    assert repo.get_commit(c2.id) == c2


def test_commit_with_no_changes_is_an_error_without_state_change(repo):
    before = repo.branch("main")
    with pytest.raises(NoChanges):
        repo.commit("main", "nothing")
    assert repo.branch("main") == before
    with pytest.raises(InvalidArgument):
        repo.commit("main", "  ")
    repo.put("main", "k", b"1")
    repo.commit("main", "c1")
    repo.put("main", "k", b"1")  # same content again: not a change
    with pytest.raises(NoChanges):
        repo.commit("main", "same bytes")


def test_commit_date_replaces_the_creation_date(repo):
    when = datetime(2020, 9, 13, 12, 26, 40, tzinfo=UTC)
    repo.put("main", "k", b"1")
    made = repo.commit("main", "dated", date=when)
    assert made.creation_date == when and repo.get_commit(made.id) == made
    repo.put("main", "k", b"2")
    with pytest.raises(InvalidArgument):
        repo.commit("main", "naive", date=datetime(2020, 1, 1))
    assert next(iter(repo.log("main", amount=1))).id == made.id


def test_diff_between_refs_and_uncommitted(repo):
    repo.put("main", "keep", b"k")
    repo.put("main", "change", b"1")
    repo.put("main", "remove", b"x")
    c1 = repo.commit("main", "c1")
    repo.put("main", "change", b"2")
    repo.put("main", "add", b"new")
    repo.delete("main", "remove")
    repo.put("main", "keep", b"k")  # identical content: no change
    uncommitted = [(d.type.value, d.path) for d in repo.diff_uncommitted("main")]
    assert uncommitted == [("added", "add"), ("changed", "change"), ("removed", "remove")]
    c2 = repo.commit("main", "c2")
    assert [(d.type.value, d.path) for d in repo.diff(c1.id, c2.id)] == uncommitted
    assert list(repo.diff("main", "main")) == []


def test_diff_pages_on_after_a_path(repo):
    """``after`` resumes a diff (committed or uncommitted) past the last path of a page."""
    for name in ("a/1", "a/2", "b/1", "c"):
        repo.put("main", name, b"x")
    c1 = repo.commit("main", "c1")
    for name in ("a/1", "a/2", "b/1", "c"):
        repo.put("main", name, b"y")
    staged = [d.path for d in repo.diff_uncommitted("main", after="a/2")]
    assert staged == ["b/1", "c"]
    assert [d.path for d in repo.diff_uncommitted("main", prefix="a/", after="a/1")] == ["a/2"]
    c2 = repo.commit("main", "c2")
    assert [d.path for d in repo.diff(c1.id, c2.id, after="a")] == ["a/1", "a/2", "b/1", "c"]
    assert [d.path for d in repo.diff(c1.id, c2.id, after="a/2")] == ["b/1", "c"]
    assert [d.path for d in repo.diff(c1.id, c2.id, prefix="a/", after="a/2")] == []
    with pytest.raises(InvalidArgument):
        list(repo.diff(c1.id, c2.id, after="a\x00"))


def test_merge_fast_forward_and_merge_commit(repo):
    repo.put("main", "base", b"b")
    repo.commit("main", "base")
    repo.create_branch("feature", "main")
    repo.put("feature", "f", b"1")
    f1 = repo.commit("feature", "feature work")
    main_before = repo.branch("main").commit_id
    result = repo.merge("feature", "main")
    assert result.commit.id == f1.id and result.fast_forward  # main was the base: fast-forward
    assert result.before.id == main_before
    repo.put("feature", "f2", b"2")
    repo.commit("feature", "more")
    repo.put("main", "m", b"3")
    m1 = repo.commit("main", "main work")
    result = repo.merge("feature", "main", metadata={"who": "ci"})
    merged = result.commit
    assert result.before == m1 and not result.fast_forward
    assert merged.parents == (m1.id, repo.resolve("feature").commit.id)
    assert merged.metadata == {"who": "ci", ".lakefs.merge.strategy": "default"}
    assert {e.path for e in repo.iter_objects("main")} == {"base", "f", "f2", "m"}
    with pytest.raises(NoChanges):
        repo.merge("feature", "main")


def test_no_fast_forward_creates_a_merge_commit(repo):
    repo.create_branch("run", "main")
    repo.put("run", "x", b"1")
    repo.commit("run", "run")
    head = repo.merge("run", "main", fast_forward=False, metadata={"run_id": "r1"}).commit
    assert len(head.parents) == 2 and head.metadata["run_id"] == "r1"


def test_merge_conflict_lists_keys_and_changes_nothing(repo):
    repo.put("main", "k", b"base")
    repo.commit("main", "base")
    repo.create_branch("a", "main")
    repo.put("a", "k", b"from-a")
    repo.commit("a", "a")
    repo.put("main", "k", b"from-main")
    main_head = repo.commit("main", "main")
    with pytest.raises(MergeConflict) as err:
        repo.merge("a", "main")
    assert err.value.keys == ["k"]
    assert repo.branch("main").commit_id == main_head.id
    repo.merge("a", "main", strategy="dest-wins")
    assert repo.get("main", "k") == b"from-main"
    repo.create_branch("b", "main~1")
    repo.put("b", "k", b"from-b")
    repo.commit("b", "b")
    repo.merge("b", "main", strategy="source-wins")
    assert repo.get("main", "k") == b"from-b"
    assert repo.resolve("main").commit.metadata[".graveler.merge.strategy"] == "source-wins"


def test_merge_into_dirty_branch_is_refused(repo):
    repo.create_branch("dev", "main")
    repo.put("dev", "x", b"1")
    repo.commit("dev", "dev")
    repo.put("main", "uncommitted", b"1")
    with pytest.raises(DirtyBranch):
        repo.merge("dev", "main")


def test_revert_a_commit_and_a_merge_commit(repo):
    repo.put("main", "a", b"1")
    repo.commit("main", "a")
    repo.put("main", "b", b"1")
    bad = repo.commit("main", "b")
    repo.put("main", "c", b"1")
    repo.commit("main", "c")
    reverted = repo.revert("main", bad.id)
    assert {e.path for e in repo.iter_objects("main")} == {"a", "c"}
    assert reverted.parents == (repo.resolve("main~1").commit.id,)
    repo.create_branch("f", "main")
    repo.put("f", "d", b"1")
    repo.commit("f", "d")
    repo.put("main", "e", b"1")
    repo.commit("main", "e")
    merge = repo.merge("f", "main").commit
    with pytest.raises(InvalidArgument, match="parent_number"):
        repo.revert("main", merge.id)
    repo.revert("main", merge.id, parent_number=1)
    assert "d" not in {e.path for e in repo.iter_objects("main")}
    with pytest.raises(NoChanges):  # the initial commit is empty (lakeFS: "no changes")
        repo.revert("main", list(repo.log("main"))[-1].id)


def test_reset_all_and_prefix(repo):
    repo.put("main", "keep/a", b"1")
    repo.commit("main", "c")
    repo.put("main", "x/1", b"1")
    repo.put("main", "y/1", b"1")
    repo.delete("main", "keep/a")
    repo.reset("main", prefix="x/")
    assert [d.path for d in repo.diff_uncommitted("main")] == ["keep/a", "y/1"]
    repo.reset("main")
    assert list(repo.diff_uncommitted("main")) == []
    assert repo.get("main", "keep/a") == b"1"


def test_transaction_commits_and_merges_on_success(repo):
    with repo.transaction("main", message="load") as tx:
        tx.put("t/1", b"1")
        tx.put("t/2", b"2")
        assert tx.get("t/1") == b"1"
        with pytest.raises(Exception):  # noqa: B017 - not visible on main yet
            repo.get("main", "t/1")
    assert repo.get("main", "t/2") == b"2"
    assert [b.name for b in repo.list_branches()] == ["main"]
    assert tx.commit is not None and repo.branch("main").commit_id == tx.commit.id


def test_transaction_failure_leaves_base_untouched(repo):
    before = repo.branch("main")
    with pytest.raises(RuntimeError), repo.transaction("main") as tx:
        tx.put("t/1", b"1")
        raise RuntimeError("boom")
    assert repo.branch("main") == before
    assert [b.name for b in repo.list_branches()] == ["main"]


def test_transaction_merge_conflict_keeps_the_branch(repo):
    repo.put("main", "k", b"0")
    repo.commit("main", "base")
    with pytest.raises(MergeConflict) as err, repo.transaction("main", branch="tx-keep") as tx:
        tx.put("k", b"tx")
        repo.put("main", "k", b"main")
        repo.commit("main", "concurrent")
    assert "tx-keep" in " ".join(err.value.__notes__)
    assert repo.get("tx-keep", "k") == b"tx"


def _entries(repo, paths, content=b"x"):
    import hashlib
    from datetime import UTC, datetime

    from graveler.storage.entry import ObjectEntry

    out = []
    for p in paths:
        addr, data = f"imports/{p}", content + p.encode()
        repo.store.put(addr, data)
        digest = hashlib.sha256(data).hexdigest()
        out.append(ObjectEntry(p, addr, len(data), digest, datetime.now(UTC)))
    return out


def test_import_entries_commits_without_staging(repo):
    repo.put("main", "staged-only", b"s")
    c = repo.import_entries("main", iter(_entries(repo, ["a/1", "a/2", "b/1"])), "import")
    assert c.message == "import" and repo.get(c.id, "a/2") == b"xa/2"
    assert [d.path for d in repo.diff_uncommitted("main")] == ["staged-only"]
    with pytest.raises(NoChanges):
        repo.import_entries("main", iter(_entries(repo, ["a/1"])), "again")
    with pytest.raises(InvalidArgument):
        repo.import_entries("main", iter(_entries(repo, ["b/2", "b/1"])), "unsorted")
    assert repo.branch("main").commit_id == c.id


def test_import_merges_into_a_branch_that_moved(repo, monkeypatch):
    from graveler.versioning import commit as operations

    repo.put("main", "other", b"1")
    real_get_commit = repo.get_commit
    moved = []

    def racing_get_commit(cid):  # a concurrent commit lands right after the import starts
        if not moved:
            moved.append(1)
            head = real_get_commit(cid)
            repo.put("main", "concurrent", b"c")
            repo.commit("main", "concurrent commit")
            return head
        return real_get_commit(cid)

    monkeypatch.setattr(repo, "get_commit", racing_get_commit)
    c = operations.import_entries(repo, "main", iter(_entries(repo, ["imp/1"])), "import")
    monkeypatch.undo()
    assert {e.path for e in repo.iter_objects(c.id)} == {"other", "concurrent", "imp/1"}
    assert repo.resolve("main~1").commit.message == "concurrent commit"


def test_stat_many_on_commits_and_branches(repo):
    for p in ("a", "b", "c"):
        repo.put("main", p, p.encode())
    c = repo.commit("main", "abc")
    repo.put("main", "d", b"d")
    repo.delete("main", "a")
    got = repo.stat_many(c.id, ["a", "zz", "c"])
    assert [e.path if e else None for e in got] == ["a", None, "c"]
    got = repo.stat_many("main", ["a", "b", "d", "zz"])
    assert [e.path if e else None for e in got] == [None, "b", "d", None]


def test_imports_and_reverts_check_their_text_like_commits(repo):
    head = repo.branch("main").commit_id
    entries = _entries(repo, ["t/1"])
    for bad in [{"committer": "a\x00b"}, {"message": "m\x00"}, {"message": 7}]:
        args = {"message": "import", **bad}
        with pytest.raises(InvalidArgument):
            repo.import_entries(
                "main", iter(entries), args["message"], committer=args.get("committer")
            )
    assert repo.branch("main").commit_id == head
    c = repo.import_entries("main", iter(entries), "import")
    with pytest.raises(InvalidArgument):
        repo.revert("main", c.id, committer="x\x00")
    assert repo.branch("main").commit_id == c.id
