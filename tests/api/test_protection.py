"""Branch protection rules and hidden branches in the engine (SQLite and PostgreSQL): a rule
applies to every branch its pattern matches, whenever and however the branch was made, and
every write, commit and delete path refuses what it blocks, naming the rule."""

from __future__ import annotations

import pytest

from graveler import BlockedAction, ProtectionRule
from graveler.core.errors import (
    AlreadyExists,
    CommitToProtectedBranch,
    InvalidArgument,
    NotFound,
    PreconditionFailed,
    ProtectedBranch,
    ProtectionRuleBlocked,
    WriteToProtectedBranch,
)
from graveler.core.protection import rule
from graveler.versioning.protection import protection_etag


def blocked(action: str, pattern: str = "release-*") -> object:
    """pytest.raises for a refusal by the rule ``pattern`` of ``action``."""
    return pytest.raises(ProtectionRuleBlocked, match=rf"rule '{pattern.replace('*', '.')}")


def test_a_rule_protects_branches_made_after_it(repo):
    repo.put("main", "a", b"1")
    repo.commit("main", "a")
    repo.add_protection_rule("release-*")
    repo.create_branch("release-1", "main")  # made after the rule, by the Python API
    head = repo.branch("release-1").commit_id
    with pytest.raises(ProtectionRuleBlocked) as refused:
        repo.put("release-1", "b", b"2")
    assert (refused.value.branch, refused.value.pattern) == ("release-1", "release-*")
    assert refused.value.action == "staging_write" and "release-*" in str(refused.value)
    assert isinstance(refused.value, WriteToProtectedBranch)  # as the per-branch flag's
    with blocked("staging_write"):
        repo.delete_many("release-1", ["a"])
    with blocked("staging_write"):
        repo.upload_many("release-1", [("c", b"3")])
    with blocked("staging_write"):
        repo.writable_branch("release-1")
    with pytest.raises(CommitToProtectedBranch, match="release-"):
        repo.commit("release-1", "nothing", allow_empty=True)
    with blocked("commit"):
        repo.revert("release-1", "main")
    with blocked("staging_write"):
        repo.reset("release-1", "a")
    with blocked("commit"):
        repo.reset_hard("release-1", "main~1")
    assert repo.branch("release-1").commit_id == head
    assert list(repo.iter_staged("release-1")) == []
    repo.put("main", "b", b"2")  # main does not match
    repo.commit("main", "b")
    repo.merge("main", "release-1")  # merges are how a protected branch changes
    assert repo.get("release-1", "b") == b"2"
    repo.delete_branch("release-1")  # the rule does not block deletes


def test_what_a_rule_blocks(repo):
    repo.add_protection_rule("keep", ["delete"])
    repo.add_protection_rule("frozen", [BlockedAction.COMMIT])
    repo.create_branch("keep", "main")
    repo.create_branch("frozen", "main")
    repo.put("keep", "x", b"1")
    repo.commit("keep", "fine: deletes only are blocked")
    with pytest.raises(ProtectionRuleBlocked, match="deleting it"):
        repo.delete_branch("keep")
    repo.put("frozen", "x", b"1")  # staging writes are not blocked
    with pytest.raises(ProtectionRuleBlocked, match="commits"):
        repo.commit("frozen", "no")
    repo.reset("frozen")
    repo.delete_protection_rule("keep")
    repo.delete_branch("keep")
    assert [b.name for b in repo.list_branches()] == ["frozen", "main"]


def test_the_per_branch_flag_still_protects(repo):
    repo.create_branch("dev", "main")
    repo.protect_branch("dev")
    with pytest.raises(ProtectedBranch) as refused:
        repo.put("dev", "x", b"1")
    assert not isinstance(refused.value, ProtectionRuleBlocked)
    with pytest.raises(ProtectedBranch):
        repo.commit("dev", "x", allow_empty=True)
    assert repo.protection_rules() == []


def test_rules_are_stored_with_the_repository(gv, repo):
    repo.set_protection_rules([rule("b*"), ProtectionRule("a", frozenset({BlockedAction.DELETE}))])
    again = gv.repository(repo.name)  # another handle reads the same rules
    assert [(r.pattern, r.actions) for r in again.protection_rules()] == [
        ("a", ["delete"]),
        ("b*", ["commit", "staging_write"]),
    ]
    with pytest.raises(AlreadyExists):
        again.add_protection_rule("a")
    with pytest.raises(NotFound):
        again.delete_protection_rule("nope")
    for bad in ["", "x" * 300, "a\nb"]:
        with pytest.raises(InvalidArgument):
            again.add_protection_rule(bad)
    with pytest.raises(InvalidArgument, match="unknown blocked action"):
        again.add_protection_rule("c", ["write"])
    assert len(again.protection_rules()) == 2  # nothing half-written


def test_replacing_rules_with_if_match(repo):
    tag = protection_etag(repo.protection_rules())
    repo.set_protection_rules([rule("x")], if_match=tag)
    with pytest.raises(PreconditionFailed):
        repo.set_protection_rules([rule("y")], if_match=tag)
    assert repo.protection_rules() == [rule("x")]
    with pytest.raises(InvalidArgument):
        repo.set_protection_rules([rule("y"), rule("y")])


def test_hidden_branches_are_listed_only_when_asked(repo):
    repo.create_branch("tx-1", "main", hidden=True)
    repo.create_branch("dev", "main")
    assert [b.name for b in repo.list_branches()] == ["dev", "main"]
    everything = repo.list_branches(show_hidden=True)
    assert [(b.name, b.hidden) for b in everything] == [
        ("dev", False),
        ("main", False),
        ("tx-1", True),
    ]
    repo.put("tx-1", "a", b"1")  # otherwise a branch like any other
    repo.commit("tx-1", "a")
    repo.merge("tx-1", "main")
    assert repo.branch("tx-1").hidden and repo.get("main", "a") == b"1"
    with pytest.raises(InvalidArgument):
        repo.create_branch("tx-2", "main", hidden="yes")


def test_a_transaction_branch_is_hidden_while_it_lives(repo):
    with repo.transaction("main") as tx:
        tx.put("a", b"1")
        assert [b.name for b in repo.list_branches()] == ["main"]
        assert tx.branch in {b.name for b in repo.list_branches(show_hidden=True)}
    assert repo.get("main", "a") == b"1"
