"""The Python facade end to end: repositories, branches, tags, objects, refs -- on SQLite and
PostgreSQL (see ``tests/conftest.py`` for the ``gv`` fixture)."""

from __future__ import annotations

import io

import pytest

from graveler.core.errors import (
    AlreadyExists,
    BranchNotFound,
    InvalidArgument,
    InvalidKey,
    InvalidName,
    InvalidRef,
    ObjectNotFound,
    ProtectedBranch,
    RefNotFound,
    RepositoryNotFound,
)


def test_create_repository_has_initial_commit_and_default_branch(gv):
    repo = gv.create_repository("lake", default_branch="trunk")
    (branch,) = repo.list_branches()
    assert branch.name == "trunk"
    (initial,) = list(repo.log("trunk"))
    assert initial.parents == () and initial.metarange_id == "" and initial.generation == 1
    assert [r.name for r in gv.list_repositories()] == ["lake"]
    assert gv.repository("lake").info.default_branch == "trunk"


@pytest.mark.parametrize("name", ["ab", "Lake", "-lake", "la_ke", "a" * 64, "lake/x", ""])
def test_bad_repository_names_are_refused(gv, name):
    with pytest.raises(InvalidName):
        gv.create_repository(name)
    assert gv.list_repositories() == []


def test_duplicate_repository_and_unknown_repository(gv):
    gv.create_repository("lake")
    with pytest.raises(AlreadyExists):
        gv.create_repository("lake")
    with pytest.raises(RepositoryNotFound):
        gv.repository("nope")
    with pytest.raises(RepositoryNotFound):
        gv.delete_repository("nope")


def test_namespace_cannot_be_shared(gv, tmp_path):
    ns = (tmp_path / "ns").as_uri()
    gv.create_repository("one", ns)
    with pytest.raises(AlreadyExists):
        gv.create_repository("two", ns)


def test_put_get_stat_streams_and_records_metadata(repo):
    data = b"x" * (3 << 20)
    e = repo.put("main", "a/b.bin", io.BytesIO(data), metadata={"owner": "team"})
    assert e.size == len(data) and len(e.checksum) == 64
    s = repo.stat("main", "a/b.bin")
    assert s.metadata == {"owner": "team"} and s.size == len(data)
    assert s.content_type == "application/octet-stream" and s.mtime.tzinfo is not None
    assert repo.get("main", "a/b.bin") == data
    with repo.open("main", "a/b.bin") as fh:
        assert fh.read(10) == b"x" * 10
    assert repo.put("main", "t.csv", b"a,b").content_type == "text/csv"


@pytest.mark.parametrize("path", ["", "a\x00b", "x" * 1025])
def test_bad_keys_are_refused_and_nothing_is_staged(repo, path):
    with pytest.raises(InvalidKey):
        repo.put("main", path, b"data")
    assert list(repo.diff_uncommitted("main")) == []


def test_unicode_keys_round_trip(repo):
    repo.put("main", "données/été.txt", b"1")
    repo.commit("main", "unicode")
    assert repo.get("main", "données/été.txt") == b"1"
    assert [e.path for e in repo.iter_objects("main", "données/")] == ["données/été.txt"]


def test_list_with_delimiter_and_pagination(repo):
    for p in ["a/1", "a/2", "b/x/1", "b/y", "c", "d/1"]:
        repo.put("main", p, p.encode())
    repo.commit("main", "files")
    repo.put("main", "b/z", b"staged")
    page = repo.list("main", "")
    assert page.common_prefixes == ["a/", "b/", "d/"] and [o.path for o in page.objects] == ["c"]
    page = repo.list("main", "b/")
    assert page.common_prefixes == ["b/x/"] and [o.path for o in page.objects] == ["b/y", "b/z"]
    seen, after = [], ""
    while True:
        page = repo.list("main", "", delimiter=None, after=after, amount=2)
        seen += [o.path for o in page.objects]
        if not page.has_more:
            break
        after = page.next_after
    assert seen == ["a/1", "a/2", "b/x/1", "b/y", "b/z", "c", "d/1"]
    page = repo.list("main", "", amount=2)
    assert page.common_prefixes == ["a/", "b/"] and page.has_more
    rest = repo.list("main", "", after=page.next_after)
    assert rest.common_prefixes == ["d/"] and [o.path for o in rest.objects] == ["c"]


def test_delete_is_staged_and_missing_object_is_an_error(repo):
    repo.put("main", "k", b"1")
    repo.commit("main", "c1")
    repo.delete("main", "k")
    with pytest.raises(ObjectNotFound):
        repo.stat("main", "k")
    assert repo.get("main~0", "k") == b"1"  # committed state is untouched until commit
    with pytest.raises(ObjectNotFound):
        repo.delete("main", "never-there")


def test_link_inside_namespace_only(repo, gv):
    store = repo.store
    store.put("external/part-0.parquet", b"parquet bytes")
    e = repo.link(
        "main", "t/part-0.parquet", repo.info.storage_namespace + "/external/part-0.parquet"
    )
    assert repo.get("main", "t/part-0.parquet") == b"parquet bytes"
    assert e.physical_address == "external/part-0.parquet"
    for bad in ["/etc/passwd", "file:///etc/passwd", "../other/x", "s3://bucket/x", "a/../../x"]:
        with pytest.raises(InvalidArgument):
            repo.link("main", "t/bad", bad)
    with pytest.raises(ObjectNotFound):
        repo.link("main", "t/missing", "external/nope")


def test_stage_many_entries_in_one_call(repo):
    store = repo.store
    entries = []
    for i in range(50):
        store.put(f"bulk/{i}", b"%d" % i)
        entries.append(repo.make_linked_entry(f"t/{i:03d}", f"bulk/{i}"))
    assert repo.stage_entries("main", entries) == 50
    repo.commit("main", "bulk")
    assert len(list(repo.iter_objects("main", "t/"))) == 50


def test_branches_create_list_delete(repo):
    repo.put("main", "k", b"1")
    c1 = repo.commit("main", "c1")
    b = repo.create_branch("dev", "main")
    assert b.commit_id == c1.id
    assert [x.name for x in repo.list_branches()] == ["dev", "main"]
    with pytest.raises(AlreadyExists):
        repo.create_branch("dev", "main")
    with pytest.raises(RefNotFound):
        repo.create_branch("dev2", "no-such-ref")
    repo.put("dev", "staged", b"x")
    repo.delete_branch("dev")
    with pytest.raises(BranchNotFound):
        repo.branch("dev")
    with pytest.raises(InvalidArgument, match="default branch"):
        repo.delete_branch("main")
    with pytest.raises(BranchNotFound):
        repo.delete_branch("dev")


def test_branch_exists(repo):
    assert repo.branch_exists("main") and not repo.branch_exists("nope")
    repo.create_branch("dev", "main")
    assert repo.branch_exists("dev")
    repo.delete_branch("dev")
    assert not repo.branch_exists("dev")


@pytest.mark.parametrize("name", ["a b", "x~1", "x^", "a:b", "a..b", "", "-x", "x.lock", "x/"])
def test_bad_branch_and_tag_names(repo, name):
    with pytest.raises(InvalidName):
        repo.create_branch(name, "main")
    with pytest.raises(InvalidName):
        repo.create_tag(name, "main")
    assert [b.name for b in repo.list_branches()] == ["main"] and repo.list_tags() == []


def test_tags_are_immutable_pointers(repo):
    repo.put("main", "k", b"v1")
    c1 = repo.commit("main", "c1")
    t = repo.create_tag("v1", "main")
    assert t.commit_id == c1.id
    with pytest.raises(AlreadyExists):
        repo.create_tag("v1", "main")
    with pytest.raises(AlreadyExists):
        repo.create_tag("main", "main")  # a tag may not shadow a branch
    repo.put("main", "k", b"v2")
    repo.commit("main", "c2")
    assert repo.get("v1", "k") == b"v1" and repo.get("main", "k") == b"v2"
    assert [x.name for x in repo.list_tags()] == ["v1"]
    repo.delete_tag("v1")
    with pytest.raises(RefNotFound):
        repo.resolve("v1")


def test_ref_expressions(repo):
    commits = []
    for i in range(4):
        repo.put("main", "k", b"%d" % i)
        commits.append(repo.commit("main", f"c{i}"))
    initial = commits[0].parents[0]
    r = repo.resolve
    assert r("main").commit.id == commits[3].id and r("main").branch is not None
    assert r("main~").commit.id == commits[2].id
    assert r("main~2").commit.id == commits[1].id
    assert r("main^").commit.id == commits[2].id
    assert r("main^^").commit.id == commits[1].id
    assert r("main~1^1~1").commit.id == commits[0].id
    assert r("main^0").commit.id == commits[3].id
    assert r("main~4").commit.id == initial
    assert r(commits[1].id).commit.id == commits[1].id
    assert r(commits[1].id[:10]).commit.id == commits[1].id
    assert r(commits[1].id[:10] + "~1").commit.id == commits[0].id
    assert r("main~1").branch is None  # modified refs are commits, not branches
    for bad in ["main~x", "~1", "main^^x", "", "  ", "ma in", None, 7, ["main"], {"a": 1}]:
        with pytest.raises(InvalidRef):
            r(bad)  # unhashable values too: the parse cache must not see them first
    for missing in ["main~5", "main^2", "nope", "deadbeef"]:
        with pytest.raises(RefNotFound):
            r(missing)


def test_reads_see_staging_then_sealed_then_committed(repo):
    from graveler.versioning.commit import _seal, update_branch

    repo.put("main", "a", b"committed")
    repo.put("main", "b", b"committed")
    repo.put("main", "c", b"committed")
    repo.commit("main", "base")
    repo.put("main", "a", b"sealed")
    repo.put("main", "b", b"sealed")
    update_branch(repo, "main", lambda b: _seal(repo.name, b))  # a commit in progress
    repo.put("main", "a", b"staged")
    repo.delete("main", "c")
    assert repo.get("main", "a") == b"staged"
    assert repo.get("main", "b") == b"sealed"
    with pytest.raises(ObjectNotFound):
        repo.get("main", "c")
    assert [e.path for e in repo.iter_objects("main")] == ["a", "b"]
    c = repo.commit("main", "everything")  # takes sealed and staged writes
    assert repo.get(c.id, "a") == b"staged" and repo.get(c.id, "b") == b"sealed"
    assert repo.branch("main").sealed_tokens == ()


def test_protected_branch_accepts_merges_only(repo):
    repo.create_branch("dev", "main")
    repo.protect_branch("main")
    with pytest.raises(ProtectedBranch):
        repo.put("main", "k", b"x")
    with pytest.raises(ProtectedBranch):
        repo.commit("main", "direct", allow_empty=True)
    repo.put("dev", "k", b"x")
    repo.commit("dev", "on dev")
    repo.merge("dev", "main")
    assert repo.get("main", "k") == b"x"
    assert repo.branch("main").protected


def test_refused_puts_leave_no_bytes_behind(repo):
    """The branch is checked in the staging transaction, after the bytes are written: a put
    it refuses removes them again."""
    repo.protect_branch("main")
    before = sorted(i.key for i in repo.store.list("data/"))
    with pytest.raises(ProtectedBranch):
        repo.put("main", "k", b"refused")
    with pytest.raises(BranchNotFound):
        repo.put("no-such-branch", "k", b"refused")
    with pytest.raises(ProtectedBranch):
        repo.stage_entries("main", [])
    assert sorted(i.key for i in repo.store.list("data/")) == before
