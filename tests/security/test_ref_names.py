"""lakeFS's ref name rule: new branch and tag names use ASCII letters, digits, ``_`` and
``-``, starting with a letter, a digit or ``_``; names stored by older versions stay readable
and deletable.

Reproduced before the fix: zero-width (U+200B), bidi (U+202E), fullwidth and combining
characters were accepted, so ``branch list`` showed two rows reading ``main``, one protected;
``/`` was accepted though no ``graveler://`` URI can address such a branch.
"""

from __future__ import annotations

import pytest

from graveler.cli import main
from graveler.client import Graveler
from graveler.core.errors import InvalidName
from graveler.core.model import Branch, Tag
from graveler.repository import Repository
from graveler.views.layers import new_staging_token

LOOK_ALIKES = {
    "zero-width space": "ma\u200bin",
    "bidi override": "\u202eniam",
    "fullwidth": "\uff4d\uff41\uff49\uff4e",
    "combining accent": "mai\u0301n",
    "cyrillic a": "m\u0430in",
    "slash": "team/main",
    "dot-dot": "v1..0",
    "trailing dot": "v1.",
    "leading dash": "-main",
    "space": "ma in",
}


@pytest.mark.parametrize("name", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_new_refs_follow_the_rule(gv: Graveler, repo: Repository, name: str) -> None:
    repo.protect_branch("main")
    with pytest.raises(InvalidName, match="ASCII letters"):
        repo.create_branch(name, "main")
    with pytest.raises(InvalidName, match="ASCII letters"):
        repo.create_tag(name, "main")
    with pytest.raises(InvalidName):
        gv.create_repository("other", default_branch=name)
    assert [b.name for b in repo.list_branches()] == ["main"] and repo.list_tags() == []


@pytest.mark.parametrize("name", ["dev", "_scratch", "2026-11-24", "Feature_X-2", "a"])
def test_names_the_rule_allows(repo: Repository, name: str) -> None:
    assert repo.create_branch(name, "main").name == name
    assert repo.create_tag(f"t{name}", "main").name == f"t{name}"


def test_tags_may_hold_a_dot_branches_may_not(repo: Repository) -> None:
    assert repo.create_tag("v1.0", "main").name == "v1.0"
    assert repo.resolve("v1.0").commit.id == repo.branch("main").commit_id
    with pytest.raises(InvalidName, match="ASCII letters"):
        repo.create_branch("v1.0", "main")


def test_names_stored_by_older_versions_stay_readable_and_deletable(repo: Repository) -> None:
    head = repo.branch("main").commit_id
    for odd in ("team/main", "ma\u200bin"):  # inserted as an older version stored them
        repo.refs.create_branch(repo.name, Branch(odd, head, new_staging_token(repo.name, "x")))
    repo.refs.create_tag(repo.name, Tag("v1..0", head))
    repo.put("team/main", "kept.txt", b"data written on the odd branch")
    repo.commit("team/main", "kept")
    assert repo.get("team/main", "kept.txt") == b"data written on the odd branch"
    repo.merge("team/main", "main")  # its data can move to a well-named branch
    assert repo.get("main", "kept.txt") == b"data written on the odd branch"
    assert repo.resolve("v1..0").commit.id == head
    repo.delete_branch("team/main")
    repo.delete_branch("ma\u200bin")
    repo.delete_tag("v1..0")
    assert [b.name for b in repo.list_branches()] == ["main"] and repo.list_tags() == []


def test_the_cli_refuses_a_look_alike_in_one_line(
    repo: Repository, gv: Graveler, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--home", str(gv.home), "--database-url", gv.database_url]
    code = main(
        [
            *args,
            "branch",
            "create",
            "graveler://lake/ma\u200bin",
            "--source",
            "graveler://lake/main",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "ASCII letters" in err
