"""Ref expressions with lakeFS's branch modifiers: ``main$`` (with staging), ``main@``
(committed only); ``main@1`` and ``branch1@^`` are invalid."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graveler.core.errors import InvalidName, InvalidRef, RefNotFound
from graveler.views.history import make_commit
from graveler.views.refexpr import RefExpression, parse_ref

# Ported from lakeFS pkg/graveler/ref/parse_ref_test.go TestParseRef (same table).
PARSE_TABLE = [
    ("main", RefExpression("main", ())),
    ("main^", RefExpression("main", (("^", 1),))),
    ("main$", RefExpression("main", (("$", 1),))),
    ("main@", RefExpression("main", (("@", 1),))),
    ("main^^", RefExpression("main", (("^", 1), ("^", 1)))),
    ("main^2^", RefExpression("main", (("^", 2), ("^", 1)))),
    ("main~^~3", RefExpression("main", (("~", 1), ("^", 1), ("~", 3)))),
]
PARSE_ERRORS = ["main@1", "^^^3", "main^a", "main$2", "main@^", "main^@", "main$~1"]


@pytest.mark.parametrize(("text", "expected"), PARSE_TABLE)
def test_parse_ref_table(text, expected):
    assert parse_ref(text) == expected


@pytest.mark.parametrize("text", PARSE_ERRORS)
def test_parse_ref_errors(text):
    with pytest.raises(InvalidRef):
        parse_ref(text)


def test_branch_views_resolve_like_lakefs(repo):
    # Ported from lakeFS pkg/graveler/ref/resolve_ref_test.go TestResolveRawRef: the
    # branch_head, branch_invalid_head*, main_staging and main_committed cases.
    repo.put("main", "a", b"1")
    head = repo.commit("main", "one")
    repo.create_branch("branch1", "main")
    repo.create_tag("v1.0", "main")
    repo.put("main", "a", b"staged")
    staging = repo.resolve("main$")
    assert staging.commit.id == head.id and staging.view == "$"
    assert (
        staging.branch is not None
        and staging.branch.staging_token == repo.branch("main").staging_token
    )
    committed = repo.resolve("main@")
    assert committed.commit.id == head.id and committed.branch is None and committed.view == "@"
    assert repo.resolve("branch1@").commit.id == head.id
    for bad in ["branch1@1", "branch1@^", "branch1^@", "v1.0@", "v1.0$", head.id + "@"]:
        with pytest.raises(InvalidRef):
            repo.resolve(bad)
    with pytest.raises(RefNotFound):
        repo.resolve("branch3@")  # branch_doesnt_exist


def test_branch_views_read_staging_or_not(repo):
    repo.put("main", "a", b"committed")
    repo.commit("main", "one")
    repo.put("main", "a", b"staged")
    repo.put("main", "b", b"new")
    assert repo.get("main$", "a") == b"staged" and repo.get("main", "a") == b"staged"
    assert repo.get("main@", "a") == b"committed"
    assert [e.path for e in repo.iter_objects("main@")] == ["a"]
    assert [e.path for e in repo.iter_objects("main$")] == ["a", "b"]
    assert repo.stat_many("main@", ["a", "b"])[1] is None


@pytest.mark.parametrize("name", ["a@b", "a$", "x@", "$x"])
def test_branch_and_tag_names_cannot_hold_modifiers(repo, name):
    with pytest.raises(InvalidName):
        repo.create_branch(name, "main")
    with pytest.raises(InvalidName):
        repo.create_tag(name, "main")


def test_dereference_with_graph(repo):
    # Ported from lakeFS pkg/graveler/ref/resolve_ref_test.go
    # TestResolveRef_DereferenceWithGraph (git help rev-parse's example graph).
    when = datetime(2020, 12, 1, 15, tzinfo=UTC)

    def add(*parents):
        nonlocal when
        c = make_commit([repo.get_commit(p) for p in parents], "", "c", "t", {}, when)
        repo.refs.add_commit(repo.name, c)
        when += timedelta(seconds=1)
        return c.id

    G, H, I, J = add(), add(), add(), add()  # noqa: E741 (names from the git docs)
    D = add(G, H)
    E = add()
    F = add(I, J)
    B = add(D, E, F)
    C = add(F)
    A = add(B, C)
    table = {
        A: ["", "^0"],
        B: ["^", "^1", "~1"],
        C: ["^2"],
        D: ["^^", "^1^1", "~2"],
        E: ["^^2"],
        F: ["^^3"],
        G: ["^^^", "^1^1^1", "~3"],
        H: ["~2^2", "^^^2"],
        I: ["^^3^"],
        J: ["^^3^2"],
    }
    for expected, suffixes in table.items():
        for suffix in suffixes:
            assert repo.resolve(A + suffix).commit.id == expected, suffix


# Ported as behaviour from lakeFS's TestController_CreateTag: a tag names a commit, reached
# by commit ID, branch (its head), ``branch@`` or another tag; ``branch$`` (uncommitted
# changes) is refused as bad input, an unknown ref is not found, a taken name conflicts.
def test_create_tag_cases_of_lakefs(repo):
    from graveler.core.errors import AlreadyExists

    repo.put("main", "foo/bar1", b"1")
    head = repo.commit("main", "some message")
    assert repo.create_tag("tag1", head.id).commit_id == head.id  # ref
    assert repo.create_tag("tag2", "main").commit_id == head.id  # branch
    assert repo.create_tag("tag3", "main@").commit_id == head.id  # branch_with_latest_modifier
    with pytest.raises(InvalidRef, match=r"uncommitted changes of branch 'main'.*tag names a"):
        repo.create_tag("tag4", "main$")  # branch_with_staging_modifier
    repo.put("main", "staged", b"x")  # staged changes make no difference
    with pytest.raises(InvalidRef):
        repo.create_tag("tag4", "main$")
    assert "tag4" not in [t.name for t in repo.list_tags()]
    repo.create_tag("tag5", "main")
    assert repo.create_tag("tag6", "tag5").commit_id == head.id  # tag_tag
    with pytest.raises(RefNotFound):
        repo.create_tag("tag7", "unknown")  # not_exists
    repo.create_tag("tag8", "main")
    with pytest.raises(AlreadyExists):
        repo.create_tag("tag8", "main")  # tag_with_conflicting_tag
    with pytest.raises(AlreadyExists):
        repo.create_tag("main", "main")  # tag_with_conflicting_branch
