"""``graveler branch-protect``, hidden branches and ``diff --three-dot`` through the CLI
(in-process ``main``): JSON documents, one-line errors and exit codes."""

from __future__ import annotations


def test_branch_protect(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    added = cli("branch-protect", "add", "graveler://lake", "rel-*")
    assert added == {"pattern": "rel-*", "blocked_actions": ["commit", "staging_write"]}
    cli("branch-protect", "add", "graveler://lake", "keep", "--block", "delete,commit")
    assert cli("branch-protect", "list", "graveler://lake") == [
        {"pattern": "keep", "blocked_actions": ["commit", "delete"]},
        {"pattern": "rel-*", "blocked_actions": ["commit", "staging_write"]},
    ]
    assert "already exists" in cli("branch-protect", "add", "graveler://lake", "keep", code=4)
    assert "unknown blocked action" in cli(
        "branch-protect", "add", "graveler://lake", "x", "--block", "write", code=2
    )
    cli("branch", "create", "graveler://lake/rel-1", "--source", "graveler://lake/main")
    local = tmp_path / "a.txt"
    local.write_text("a")
    refused = cli("fs", "upload", str(local), "graveler://lake/rel-1/a.txt", code=4)
    assert "rel-*" in refused and "staging_write" in refused
    cli("branch", "create", "graveler://lake/keep", "--source", "graveler://lake/main")
    assert "'keep'" in cli("branch", "delete", "graveler://lake/keep", code=4)
    assert cli("branch-protect", "delete", "graveler://lake", "keep") == {"deleted": "keep"}
    cli("branch", "delete", "graveler://lake/keep")
    assert "no branch protection rule" in cli(
        "branch-protect", "delete", "graveler://lake", "keep", code=3
    )


def test_hidden_branches(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    made = cli(
        "branch", "create", "graveler://lake/tx", "--source", "graveler://lake/main", "--hidden"
    )
    assert made["hidden"] is True
    assert [b["name"] for b in cli("branch", "list", "graveler://lake")] == ["main"]
    listed = cli("branch", "list", "graveler://lake", "--show-hidden")
    assert [(b["name"], b["hidden"]) for b in listed] == [("main", False), ("tx", True)]


def test_three_dot_diff(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    local = tmp_path / "f"
    local.write_text("base")
    cli("fs", "upload", str(local), "graveler://lake/main/both")
    cli("commit", "graveler://lake/main", "-m", "base")
    cli("branch", "create", "graveler://lake/dev", "--source", "graveler://lake/main")
    for branch in ("main", "dev"):
        local.write_text(branch)
        cli("fs", "upload", str(local), f"graveler://lake/{branch}/both")
        cli("fs", "upload", str(local), f"graveler://lake/{branch}/{branch}-only")
        cli("commit", f"graveler://lake/{branch}", "-m", branch)
    assert cli("diff", "graveler://lake/main", "graveler://lake/dev", "--three-dot") == [
        {"type": "conflict", "path": "both"},
        {"type": "added", "path": "dev-only"},
    ]
    assert "two refs" in cli("diff", "graveler://lake/main", "--three-dot", code=2)


def test_gc_uses_the_rules_the_repository_keeps(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    local = tmp_path / "f"
    for n in (1, 2):
        local.write_text(f"version {n}")
        cli("fs", "upload", str(local), "graveler://lake/main/a.txt")
        cli("commit", "graveler://lake/main", "-m", f"v{n}")
    run = ("gc", "graveler://lake", "--dry-run", "--grace-hours", "0")
    assert cli(*run)["selected"] == []  # the default keeps 21 days
    assert "keeps no retention rules" in cli("gc-rules", "get", "graveler://lake", code=3)
    rules = tmp_path / "rules.json"
    rules.write_text('{"default_retention_days": 0, "branches": []}')
    assert cli("gc-rules", "set", "graveler://lake", str(rules)) == {
        "default_retention_days": 0,
        "branches": [],
    }
    assert len(cli(*run)["selected"]) == 1  # version 1 is no longer retained
    assert cli(*run, "--retention-days", "21")["selected"] == []  # flags still win
    rules.write_text('{"default_retention_days": 0.5, "branches": []}')
    assert "whole days" in cli("gc-rules", "set", "graveler://lake", str(rules), code=2)
    cli("gc-rules", "delete", "graveler://lake")
    assert cli(*run)["selected"] == []
