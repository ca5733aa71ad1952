"""RefStore conformance: repositories, branches, tags, commits (SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from graveler.core.errors import (
    AlreadyExists,
    BranchMoved,
    BranchNotFound,
    CommitNotFound,
    InvalidArgument,
    RepositoryNotFound,
    TagNotFound,
)
from graveler.core.model import StagedEntry, Tag
from graveler.storage.refs import rows
from graveler.storage.refs.store import MetadataStore
from tests.refs.conftest import T0, a_branch, a_commit, a_repository, new_repository

# --- repositories -----------------------------------------------------------------------------


def test_repository_round_trip_keeps_microseconds_and_normalises_to_utc(
    store: MetadataStore,
) -> None:
    branch = new_repository(store)
    got = store.get_repository("repo")
    assert got == a_repository()
    assert got.creation_date.tzinfo is UTC
    assert got.creation_date.microsecond == T0.microsecond
    assert store.get_branch("repo", "main") == branch
    assert store.get_commit("repo", "c0") == a_commit()


def test_create_repository_twice_raises_already_exists_and_keeps_the_first(
    store: MetadataStore,
) -> None:
    branch = new_repository(store)
    with pytest.raises(AlreadyExists, match="repo"):
        store.create_repository(
            replace(a_repository(), storage_namespace="mem://other"), a_commit("c9"), a_branch()
        )
    assert store.get_repository("repo").storage_namespace == "mem://repo"
    assert store.list_branches("repo") == [branch]
    with pytest.raises(CommitNotFound):
        store.get_commit("repo", "c9")


def test_missing_repository(store: MetadataStore) -> None:
    with pytest.raises(RepositoryNotFound):
        store.get_repository("nope")
    with pytest.raises(RepositoryNotFound):
        store.delete_repository("nope")
    with pytest.raises(RepositoryNotFound):
        store.list_branches("nope")
    with pytest.raises(RepositoryNotFound):
        store.list_tags("nope")


def test_list_repositories_sorted_by_code_point(store: MetadataStore) -> None:
    names = ["repo-b", "Repo-a", "repo-a", "repo-é", "repo-z", "repo-10", "repo-9"]
    for name in names:
        new_repository(store, name)
    assert [r.name for r in store.list_repositories()] == sorted(names)


def test_naive_datetime_is_refused(store: MetadataStore) -> None:
    naive = replace(a_repository(), creation_date=datetime(2026, 1, 1))
    with pytest.raises(InvalidArgument, match="naive"):
        store.create_repository(naive, a_commit(), a_branch())
    assert store.list_repositories() == []
    main = new_repository(store)  # a commit recorded with a branch move (SQLite: the driver)
    late = a_commit("c1", creation_date=datetime(2026, 1, 1))
    with pytest.raises(InvalidArgument, match="naive"):
        store.advance_branch("repo", main, replace(main, commit_id="c1"), late)
    assert store.get_branch("repo", "main") == main


def test_delete_repository_removes_everything_and_nothing_else(store: MetadataStore) -> None:
    main = new_repository(store, "doomed")
    other = new_repository(store, "kept")
    sealed = replace(main, staging_token="fresh", sealed_tokens=(main.staging_token,))
    store.stage("doomed", "main", [StagedEntry(b"a", b"i", b"v")])
    store.update_branch("doomed", main, sealed)
    store.stage("doomed", "main", [StagedEntry(b"b", b"i", b"v")])
    store.create_branch("doomed", a_branch("dev"))
    store.stage("doomed", "dev", [StagedEntry(b"c", b"i", b"v")])
    store.create_tag("doomed", Tag("v1", "c0"))
    store.stage("kept", "main", [StagedEntry(b"a", b"i", b"v")])

    store.delete_repository("doomed")

    assert [r.name for r in store.list_repositories()] == ["kept"]
    for token in (main.staging_token, "fresh"):
        assert store.count_staged(token) == 0
    assert store.count_staged(other.staging_token) == 1
    with pytest.raises(BranchNotFound):
        store.get_branch("doomed", "dev")
    with pytest.raises(TagNotFound):
        store.get_tag("doomed", "v1")
    with pytest.raises(CommitNotFound):
        store.get_commit("doomed", "c0")
    # the name is free again and the new repository starts clean
    new_repository(store, "doomed")
    assert [b.name for b in store.list_branches("doomed")] == ["main"]
    assert store.list_tags("doomed") == []


# --- branches ---------------------------------------------------------------------------------


def test_branches_create_get_list(store: MetadataStore) -> None:
    main = new_repository(store)
    names = ["feature/x", "dev", "Dev", "zeta", "ünï"]
    created = {name: a_branch(name) for name in names}
    for branch in created.values():
        store.create_branch("repo", branch)
    assert store.get_branch("repo", "feature/x") == created["feature/x"]
    listed = store.list_branches("repo")
    assert [b.name for b in listed] == sorted([*names, "main"])
    assert listed == sorted([*created.values(), main], key=lambda b: b.name)


def test_create_branch_errors(store: MetadataStore) -> None:
    new_repository(store)
    with pytest.raises(AlreadyExists, match="main"):
        store.create_branch("repo", a_branch("main"))
    with pytest.raises(RepositoryNotFound):
        store.create_branch("nope", a_branch("x"))
    with pytest.raises(BranchNotFound):
        store.get_branch("repo", "missing")
    with pytest.raises(BranchNotFound):
        store.get_branch("nope", "main")


def test_update_branch_swaps_the_whole_row(store: MetadataStore) -> None:
    main = new_repository(store)
    store.add_commit("repo", a_commit("c1", ("c0",)))
    new = replace(
        main, commit_id="c1", staging_token="t2", sealed_tokens=("t1", "t0"), protected=True
    )
    store.update_branch("repo", main, new)
    assert store.get_branch("repo", "main") == new
    back = replace(new, sealed_tokens=(), protected=False)
    store.update_branch("repo", new, back)
    assert store.get_branch("repo", "main") == back


@pytest.mark.parametrize(
    "stale",
    [
        {"commit_id": "c-other"},
        {"staging_token": "t-other"},
        {"sealed_tokens": ("t-sealed",)},
        {"protected": True},
    ],
    ids=["commit_id", "staging_token", "sealed_tokens", "protected"],
)
def test_update_branch_with_stale_expected_raises_branch_moved(
    store: MetadataStore, stale: dict[str, object]
) -> None:
    main = new_repository(store)
    with pytest.raises(BranchMoved):
        store.update_branch("repo", replace(main, **stale), replace(main, commit_id="c9"))  # type: ignore[arg-type]
    assert store.get_branch("repo", "main") == main


def test_update_branch_errors(store: MetadataStore) -> None:
    main = new_repository(store)
    with pytest.raises(BranchNotFound):
        store.update_branch("repo", a_branch("ghost"), a_branch("ghost"))
    with pytest.raises(InvalidArgument):
        store.update_branch("repo", main, replace(main, name="renamed"))
    assert store.get_branch("repo", "main") == main


def test_delete_branch_returns_the_row_and_leaves_staging_to_the_caller(
    store: MetadataStore,
) -> None:
    new_repository(store)
    dev = a_branch("dev")
    store.create_branch("repo", dev)
    token = store.stage("repo", "dev", [StagedEntry(b"k", b"i", b"v")])
    assert store.delete_branch("repo", "dev") == dev
    with pytest.raises(BranchNotFound):
        store.get_branch("repo", "dev")
    with pytest.raises(BranchNotFound):
        store.delete_branch("repo", "dev")
    assert store.count_staged(token) == 1


# --- tags -------------------------------------------------------------------------------------


def test_tags(store: MetadataStore) -> None:
    new_repository(store)
    new_repository(store, "other")
    for name in ["v2", "v10", "V1", "release/2026"]:
        store.create_tag("repo", Tag(name, "c0"))
    assert store.get_tag("repo", "v10") == Tag("v10", "c0")
    assert [t.name for t in store.list_tags("repo")] == ["V1", "release/2026", "v10", "v2"]
    assert store.list_tags("other") == []
    with pytest.raises(AlreadyExists, match="v2"):
        store.create_tag("repo", Tag("v2", "c1"))
    assert store.get_tag("repo", "v2") == Tag("v2", "c0")
    store.delete_tag("repo", "v2")
    with pytest.raises(TagNotFound):
        store.get_tag("repo", "v2")
    with pytest.raises(TagNotFound):
        store.delete_tag("repo", "v2")
    with pytest.raises(TagNotFound):
        store.get_tag("other", "v10")
    with pytest.raises(RepositoryNotFound):
        store.create_tag("nope", Tag("v1", "c0"))


# --- commits ----------------------------------------------------------------------------------


def test_commit_round_trip(store: MetadataStore) -> None:
    new_repository(store)
    commit = a_commit(
        "c2",
        ("c1", "c0"),
        metarange_id="mr-1",
        message="merge: ünïcode ✓\nsecond line",
        committer="Zoë <z@example.com>",
        metadata={"b": "2", "a": "ä", "empty": ""},
        generation=7,
    )
    store.add_commit("repo", commit)
    got = store.get_commit("repo", "c2")
    assert got == commit
    assert got.parents == ("c1", "c0")
    assert got.creation_date.tzinfo is UTC


def test_add_commit_is_idempotent_by_id(store: MetadataStore) -> None:
    new_repository(store)
    store.add_commit("repo", a_commit("c1", ("c0",)))
    store.add_commit("repo", a_commit("c1", ("c0",)))
    store.add_commit("repo", a_commit("c1", ("c0",), message="different"))
    assert store.get_commit("repo", "c1").message == "initial commit"


def test_commit_errors(store: MetadataStore) -> None:
    new_repository(store)
    new_repository(store, "other")
    store.add_commit("other", a_commit("only-in-other"))
    with pytest.raises(CommitNotFound):
        store.get_commit("repo", "only-in-other")
    with pytest.raises(RepositoryNotFound):
        store.add_commit("nope", a_commit("c1"))


def test_commits_with_prefix(store: MetadataStore) -> None:
    new_repository(store)
    new_repository(store, "other")
    ids = ["abc123", "abc456", "abd000", "ab", "b00000", "ABC999"]
    for commit_id in ids:
        store.add_commit("repo", a_commit(commit_id))
    store.add_commit("other", a_commit("abc000"))
    assert store.commits_with_prefix("repo", "abc") == ["abc123", "abc456"]
    assert store.commits_with_prefix("repo", "abc", limit=1) == ["abc123"]
    assert store.commits_with_prefix("repo", "abc4") == ["abc456"]
    assert store.commits_with_prefix("repo", "ab", limit=10) == ["ab", "abc123", "abc456", "abd000"]
    assert store.commits_with_prefix("repo", "abz") == []
    assert store.commits_with_prefix("repo", "ABC") == ["ABC999"]
    assert store.commits_with_prefix("repo", "", limit=3) == ["ABC999", "ab", "abc123"]
    assert store.commits_with_prefix("nope", "a") == []


def test_iter_commits_pages_through_everything(
    store: MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rows, "ITER_BATCH", 3)
    new_repository(store)
    new_repository(store, "other")
    ids = {f"c{i:02d}" for i in range(1, 10)}  # 9 + c0 = 10 commits: pages of 3, 3, 3, 1
    for commit_id in ids:
        store.add_commit("repo", a_commit(commit_id, ("c0",)))
    commits = list(store.iter_commits("repo"))
    assert {c.id for c in commits} == ids | {"c0"}
    assert len(commits) == 10
    assert [c.id for c in store.iter_commits("other")] == ["c0"]
    assert list(store.iter_commits("nope")) == []
