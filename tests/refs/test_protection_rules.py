"""RefStore conformance for branch protection rules and hidden branches (SQLite through
SQLAlchemy and through the standard library, PostgreSQL): rules stored per repository,
replaced atomically (with a compare), checked by every ``stage`` in its transaction; the
hidden flag of a branch row kept through every swap."""

from __future__ import annotations

import dataclasses

import pytest

from graveler.core.errors import (
    InvalidArgument,
    PreconditionFailed,
    ProtectionRuleBlocked,
    RepositoryNotFound,
)
from graveler.core.model import StagedEntry
from graveler.core.protection import BlockedAction, ProtectionRule, rule
from graveler.storage.refs.store import MetadataStore
from tests.refs.conftest import a_branch, new_repository

WRITES = frozenset({BlockedAction.STAGING_WRITE})
COMMITS = frozenset({BlockedAction.COMMIT})


def entry(key: bytes) -> StagedEntry:
    return StagedEntry(key, b"id:" + key, b"val:" + key)


def test_rules_round_trip_sorted_by_pattern(store: MetadataStore) -> None:
    new_repository(store)
    new_repository(store, "other")
    assert store.get_protection_rules("repo") == []
    rules = [ProtectionRule("rel-*", COMMITS), rule("main"), rule("a?c", ["delete"])]
    store.set_protection_rules("repo", rules)
    got = store.get_protection_rules("repo")
    assert [r.pattern for r in got] == ["a?c", "main", "rel-*"]
    assert got[0].blocked == {BlockedAction.DELETE} and got[2].blocked == COMMITS
    assert got[1].blocked == {BlockedAction.STAGING_WRITE, BlockedAction.COMMIT}
    assert store.get_protection_rules("other") == []
    store.set_protection_rules("repo", [rule("x")])
    assert store.get_protection_rules("repo") == [rule("x")]
    store.set_protection_rules("repo", [])
    assert store.get_protection_rules("repo") == []


def test_replacing_with_a_compare(store: MetadataStore) -> None:
    new_repository(store)
    store.set_protection_rules("repo", [rule("a"), rule("b")])
    with pytest.raises(PreconditionFailed, match="changed"):
        store.set_protection_rules("repo", [rule("c")], expected=[rule("a")])
    assert store.get_protection_rules("repo") == [rule("a"), rule("b")]
    store.set_protection_rules("repo", [rule("c")], expected=[rule("b"), rule("a")])
    assert store.get_protection_rules("repo") == [rule("c")]
    with pytest.raises(PreconditionFailed):  # same pattern, other actions: not the same rules
        store.set_protection_rules("repo", [], expected=[ProtectionRule("c", COMMITS)])


def test_bad_rule_sets_and_missing_repositories(store: MetadataStore) -> None:
    new_repository(store)
    store.set_protection_rules("repo", [rule("keep")])
    with pytest.raises(InvalidArgument, match="two"):
        store.set_protection_rules("repo", [rule("a"), ProtectionRule("a", COMMITS)])
    assert store.get_protection_rules("repo") == [rule("keep")]
    with pytest.raises(RepositoryNotFound):
        store.get_protection_rules("nope")
    with pytest.raises(RepositoryNotFound):
        store.set_protection_rules("nope", [rule("a")])


def test_deleting_a_repository_deletes_its_rules(store: MetadataStore) -> None:
    new_repository(store)
    store.set_protection_rules("repo", [rule("main")])
    store.delete_repository("repo")
    new_repository(store)
    assert store.get_protection_rules("repo") == []


@pytest.mark.parametrize("count", [1, 3, 40], ids=["one", "few", "many"])
def test_a_rule_blocking_staging_writes_refuses_every_size_of_call(
    store: MetadataStore, count: int
) -> None:
    token = new_repository(store).staging_token
    release = a_branch("release-1")
    store.create_branch("repo", release)
    entries = [entry(b"k%d" % i) for i in range(count)]
    store.set_protection_rules("repo", [ProtectionRule("release-*", WRITES)])
    with pytest.raises(ProtectionRuleBlocked, match="release-\\*") as refused:
        store.stage("repo", "release-1", entries)
    assert (refused.value.pattern, refused.value.action) == ("release-*", "staging_write")
    assert refused.value.branch == "release-1"
    assert store.count_staged(release.staging_token) == 0
    assert store.stage("repo", "main", entries) == token  # the pattern does not match main
    store.set_protection_rules("repo", [ProtectionRule("release-*", COMMITS)])
    assert store.stage("repo", "release-1", entries) == release.staging_token


def test_a_rule_applies_to_branches_created_after_it(store: MetadataStore) -> None:
    new_repository(store)
    store.set_protection_rules("repo", [rule("prod*")])
    store.create_branch("repo", a_branch("production"))
    with pytest.raises(ProtectionRuleBlocked):
        store.stage("repo", "production", [entry(b"a")])


def test_the_hidden_flag_round_trips_and_survives_swaps(store: MetadataStore) -> None:
    new_repository(store)
    hidden = dataclasses.replace(a_branch("tx-1"), hidden=True)
    store.create_branch("repo", hidden)
    assert store.get_branch("repo", "tx-1") == hidden
    listed = {b.name: b.hidden for b in store.list_branches("repo")}
    assert listed == {"main": False, "tx-1": True}
    moved = dataclasses.replace(hidden, commit_id="c1", sealed_tokens=("t0",))
    store.update_branch("repo", hidden, moved)
    assert store.get_branch("repo", "tx-1").hidden
    view = store.branch_view("repo", "tx-1", entries=False)
    assert view.branch == moved
    assert store.delete_branch("repo", "tx-1").hidden


# --- garbage-collection rules (kept beside the protection rules) -------------------------------


def test_gc_rules_round_trip_replace_and_remove(store: MetadataStore) -> None:
    new_repository(store)
    new_repository(store, "other")
    assert store.get_gc_rules("repo") is None
    rules = {"default_retention_days": 21, "branches": [{"branch_id": "main", "retention_days": 7}]}
    store.set_gc_rules("repo", rules)
    assert store.get_gc_rules("repo") == rules
    assert store.get_gc_rules("other") is None
    store.set_gc_rules("repo", {"default_retention_days": 1, "branches": []})
    assert store.get_gc_rules("repo") == {"default_retention_days": 1, "branches": []}
    store.set_gc_rules("repo", None)
    assert store.get_gc_rules("repo") is None
    with pytest.raises(RepositoryNotFound):
        store.get_gc_rules("nope")
    with pytest.raises(RepositoryNotFound):
        store.set_gc_rules("nope", rules)
    store.set_gc_rules("repo", rules)
    store.delete_repository("repo")
    new_repository(store)
    assert store.get_gc_rules("repo") is None
