"""Transactions: ``fs.transaction("lake", base="main")`` (ephemeral branch, commit + merge on
success, base untouched on failure) and fsspec's plain ``with fs.transaction:``."""

from __future__ import annotations

import pytest
from graveler_fsspec import PathNotFound

from graveler.core.errors import InvalidArgument, MergeConflict


def data_keys(repo) -> set[str]:
    return {info.key for info in repo.store.list("data/")}


def test_success_commits_on_an_ephemeral_branch_and_merges(fs, lake):
    fs.pipe("lake/main/keep.txt", b"k")
    lake.commit("main", "base")
    head = lake.resolve("main").commit.id
    with fs.transaction("lake", base="main", message="load day 1", metadata={"run": "7"}) as tx:
        assert tx.branch != "main" and tx.branch in {b.name for b in lake.list_branches()}
        with fs.open(tx.url("day1/a.csv"), "wb") as f:
            f.write(b"a\n")
        fs.pipe(f"lake/{tx.branch}/day1/b.csv", b"b\n")
        assert not fs.exists("lake/main/day1")  # base sees nothing yet
        assert not fs.exists(f"lake/{tx.branch}/day1/a.csv")  # deferred until the end
    assert fs.cat("lake/main/day1/a.csv") == b"a\n" and fs.cat("lake/main/day1/b.csv") == b"b\n"
    assert tx.commit is not None and tx.commit.id == lake.resolve("main").commit.id
    assert tx.commit.message == "load day 1" and tx.commit.metadata.get("run") == "7"
    assert head in {c.id for c in lake.log("main")}
    assert [b.name for b in lake.list_branches()] == ["main"]
    assert list(lake.diff_uncommitted("main")) == []
    assert not fs._intrans and fs._transaction is None


def test_failure_leaves_the_base_untouched_and_removes_everything(fs, lake):
    fs.pipe("lake/main/keep.txt", b"k")
    lake.commit("main", "base")
    head = lake.resolve("main").commit.id
    before = data_keys(lake)
    with pytest.raises(ValueError, match="validation failed"), fs.transaction("lake") as tx:
        with fs.open(tx.url("out/big.bin"), "wb", block_size=64 << 10) as f:
            f.write(b"x" * (300 << 10))  # streamed, not only buffered
        fs.pipe(tx.url("out/small.txt"), b"s")
        fs.rm(tx.url("keep.txt"))
        raise ValueError("validation failed")
    assert lake.resolve("main").commit.id == head
    assert fs.ls("lake/main", detail=False) == ["lake/main/keep.txt"]
    assert [b.name for b in lake.list_branches()] == ["main"]
    assert data_keys(lake) == before  # deferred uploads were deleted, not just hidden
    assert not fs._intrans


def test_a_transaction_without_changes_deletes_its_branch(fs, lake):
    head = lake.resolve("main").commit.id
    with fs.transaction("lake") as tx:
        pass
    assert tx.commit is None and lake.resolve("main").commit.id == head
    assert [b.name for b in lake.list_branches()] == ["main"]


def test_a_merge_conflict_keeps_the_branch_and_says_so(fs, lake):
    fs.pipe("lake/main/x", b"0")
    lake.commit("main", "base")
    with pytest.raises(MergeConflict) as caught, fs.transaction("lake", base="main") as tx:
        fs.pipe(tx.url("x"), b"tx")
        lake.put("main", "x", b"concurrent")
        lake.commit("main", "someone else")
    assert tx.branch in str(caught.value.__notes__)
    assert fs.cat(f"lake/{tx.branch}/x") == b"tx"


def test_writes_to_the_base_inside_its_transaction_are_refused(fs, lake):
    with fs.transaction("lake", base="main") as tx:
        with pytest.raises(InvalidArgument, match=r"tx\.url"):
            fs.pipe("lake/main/x", b"1")
        fs.pipe(tx.url("x"), b"2")
    assert fs.cat("lake/main/x") == b"2"


def test_last_write_of_a_key_wins_and_earlier_uploads_are_dropped(fs, lake):
    with fs.transaction("lake") as tx:
        for version in (b"1", b"22", b"333"):
            fs.pipe(tx.url("k"), version)
    assert fs.cat("lake/main/k") == b"333"
    assert len(data_keys(lake)) == 1


def test_plain_fsspec_transaction_stages_all_files_together(fs, lake):
    with fs.transaction:
        fs.pipe("lake/main/a", b"a")
        with fs.open("lake/main/b", "wb") as f:
            f.write(b"b")
        assert not fs.exists("lake/main/a") and not fs.exists("lake/main/b")
    assert fs.cat("lake/main/a") == b"a" and fs.cat("lake/main/b") == b"b"
    before = data_keys(lake)
    with pytest.raises(KeyError), fs.transaction:
        fs.pipe("lake/main/c", b"c")
        raise KeyError("stop")
    assert not fs.exists("lake/main/c") and data_keys(lake) == before


def test_bad_transactions_are_refused_without_side_effects(fs, lake):
    with pytest.raises(PathNotFound):
        fs.transaction("no-such-repo")
    assert not fs._intrans
    with fs.transaction("lake"), pytest.raises(InvalidArgument, match="already open"):
        fs.transaction("lake")
    with pytest.raises(FileNotFoundError), fs.transaction("lake", base="no-such-branch"):
        pass
    lake.create_tag("v1", "main")
    with pytest.raises(PermissionError, match="not one"), fs.transaction("lake", base="v1"):
        pass
    assert not fs._intrans and [b.name for b in lake.list_branches()] == ["main"]
