"""``log``: every ancestor by default (lakeFS order), first-parent, since/until, stop-at, a
limit, and filtering by objects and prefixes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graveler.core.errors import InvalidArgument
from graveler.views.history import make_commit

BASE = datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC)


def _graph(repo, spec):
    """Add commits named by ``spec`` {name: (hours, [parent names])}; returns name -> id."""
    ids: dict[str, str] = {}
    for name, (hours, parents) in spec.items():
        c = make_commit(
            [repo.get_commit(ids[p]) for p in parents],
            "",
            name,
            "t",
            {},
            BASE + timedelta(hours=hours),
        )
        repo.refs.add_commit(repo.name, c)
        ids[name] = c.id
    return ids


# Ported from lakeFS pkg/graveler/ref/commit_iterator_test.go TestCommitIterator. One deliberate
# difference: c1.5 is a child of c1 with an older timestamp (a clock that disagrees), and
# lakeFS lists c1 before it; graveler never lists a commit after one of its ancestors, so
# c1.5 comes first wherever both appear (c9, c10, c11).
ITERATOR_GRAPH = {
    "c0": (0, []),
    "c1": (4, ["c0"]),
    "c1.5": (3, ["c1"]),
    "c2": (2, ["c0"]),
    "c3": (6, ["c1", "c0"]),
    "c4": (8, ["c2", "c3"]),
    "c5": (12, ["c3"]),
    "c6": (10, ["c4"]),
    "c7": (14, ["c5"]),
    "c8": (16, ["c4", "c5"]),
    "c9": (18, ["c8", "c1.5"]),
    "c10": (20, ["c1.5", "c9"]),
    "c11": (22, ["c8", "c3", "c4", "c10", "c2", "c5"]),
}
ITERATOR_CASES = [
    ("c0", False, "c0"),
    ("c0", True, "c0"),
    ("c3", False, "c3 c1 c0"),
    ("c3", True, "c3 c1 c0"),
    ("c4", False, "c4 c3 c1 c2 c0"),
    ("c4", True, "c4 c2 c0"),
    ("c8", False, "c8 c5 c4 c3 c1 c2 c0"),
    ("c8", True, "c8 c4 c2 c0"),
    ("c9", False, "c9 c8 c5 c4 c3 c1.5 c1 c2 c0"),
    ("c10", False, "c10 c9 c8 c5 c4 c3 c1.5 c1 c2 c0"),
    ("c11", False, "c11 c10 c9 c8 c5 c4 c3 c1.5 c1 c2 c0"),
]


def test_commit_iterator_order(repo):
    ids = _graph(repo, ITERATOR_GRAPH)
    for start, first_parent, expected in ITERATOR_CASES:
        got = [c.message for c in repo.log(ids[start], first_parent=first_parent)]
        assert got == expected.split(), (start, first_parent)


def test_log_graph(repo):
    # Ported from lakeFS pkg/graveler/ref/manager_test.go TestManager_LogGraph
    # (full_graph, full_graph_first_parent, start_from, since; lakeFS's seek cases are
    # iterator-internal and have no counterpart here).
    #   ---1----2----4----7
    #       \              \
    #        3----5----6----8---
    dag = {"c1": [], "c2": ["c1"], "c3": ["c1"], "c4": ["c2"], "c5": ["c3"], "c6": ["c5"]}
    dag |= {"c7": ["c4"], "c8": ["c6", "c7"]}
    start = datetime(2020, 12, 1, 15, tzinfo=UTC)
    ids: dict[str, str] = {}
    for i, name in enumerate(sorted(dag), 1):
        c = make_commit(
            [repo.get_commit(ids[p]) for p in dag[name]],
            "",
            name,
            "u",
            {},
            start + timedelta(minutes=i),
        )
        repo.refs.add_commit(repo.name, c)
        ids[name] = c.id
    msgs = lambda it: [c.message for c in it]  # noqa: E731
    assert msgs(repo.log(ids["c8"])) == ["c8", "c7", "c6", "c5", "c4", "c3", "c2", "c1"]
    assert msgs(repo.log(ids["c8"], first_parent=True)) == ["c8", "c6", "c5", "c3", "c1"]
    assert msgs(repo.log(ids["c7"])) == ["c7", "c4", "c2", "c1"]
    since = datetime(2020, 12, 1, 15, 5, tzinfo=UTC)
    assert msgs(repo.log(ids["c8"], since=since)) == ["c8", "c7", "c6", "c5"]
    until = datetime(2020, 12, 1, 15, 6, tzinfo=UTC)
    assert msgs(repo.log(ids["c8"], until=until)) == ["c6", "c5", "c4", "c3", "c2", "c1"]
    assert msgs(repo.log(ids["c8"], since=since, until=until)) == ["c6", "c5"]


def test_same_date_never_lists_a_parent_before_its_child(repo):
    # lakeFS's TestResolveRef_SameDate graph: c5 = merge(c4, c2), c4 -> c3 -> c1, c2 -> c1,
    # all created at one time. Ties go to the larger commit ID (as in lakeFS), but only among
    # commits whose children are all listed: lakeFS's plain tie-break would list
    # c5 c4 c2 c1 c3 here (c1 before its child c3), graveler lists c5 c4 c2 c3 c1.
    when = datetime(2020, 12, 1, 15, tzinfo=UTC)
    ids: dict[str, str] = {}

    def add(msg, *parents):
        c = make_commit([repo.get_commit(ids[p]) for p in parents], "", msg, "tester", {}, when)
        repo.refs.add_commit(repo.name, c)
        ids[msg] = c.id

    add("c1")
    add("c2", "c1")
    add("c3", "c1")
    add("c4", "c3")
    add("c5", "c4", "c2")
    assert ids["c1"] > ids["c3"] and ids["c4"] > ids["c2"] > ids["c3"]  # what made c1 jump
    assert [c.message for c in repo.log(ids["c5"])] == ["c5", "c4", "c2", "c3", "c1"]
    assert [c.message for c in repo.log(ids["c5"], amount=4)] == ["c5", "c4", "c2", "c3"]
    assert [c.message for c in repo.log(ids["c5"], first_parent=True)] == ["c5", "c4", "c3", "c1"]


def _ancestors(repo, commit_id):
    seen, todo = set(), list(repo.get_commit(commit_id).parents)
    while todo:
        cid = todo.pop()
        if cid not in seen:
            seen.add(cid)
            todo.extend(repo.get_commit(cid).parents)
    return seen


@pytest.mark.parametrize("seed", range(8))
def test_no_commit_is_listed_after_an_ancestor(repo, seed):
    """Random merge-heavy histories with few distinct timestamps, some going backwards:
    every commit is listed once, and after none of its ancestors."""
    import random

    rng = random.Random(seed)
    ids: list[str] = []
    for n in range(40):
        parents = rng.sample(ids, min(len(ids), rng.choice([1, 1, 2, 3]))) if ids else []
        when = BASE + timedelta(hours=rng.choice([0, 0, 1, -1]))
        c = make_commit([repo.get_commit(p) for p in parents], "", f"m{n}", "t", {}, when)
        repo.refs.add_commit(repo.name, c)
        ids.append(c.id)
    listed = [c.id for c in repo.log(ids[-1])]
    assert len(listed) == len(set(listed)) == len(_ancestors(repo, ids[-1])) + 1
    position = {cid: i for i, cid in enumerate(listed)}
    for cid in listed:
        assert all(position[a] > position[cid] for a in _ancestors(repo, cid))


@pytest.fixture
def ten_commits(repo):
    """lakeFS TestController_LogCommitsPredefinedData's repository: commitN adds foo/barN."""
    commits = []
    for i in range(1, 11):
        repo.put("main", f"foo/bar{i}", b"x" * i)
        commits.append(repo.commit("main", f"commit{i}"))
    return commits


# Ported from lakeFS pkg/api/controller_test.go TestController_LogCommitsPredefinedData.
PREDEFINED = [
    ("log", {}, [f"commit{i}" for i in range(10, 0, -1)] + ["Repository created"]),
    ("limit", {"amount": 1}, ["commit10"]),
    ("amount", {"amount": 3}, ["commit10", "commit9", "commit8"]),
    ("limit-object", {"amount": 1, "objects": ["foo/bar7"]}, ["commit7"]),
    ("limit-object-not-found", {"amount": 1, "objects": ["foo/bar99"]}, []),
    (
        "log-with-objects",
        {"objects": ["foo/bar7", "foo/bar3", "foo/bar9"]},
        ["commit9", "commit7", "commit3"],
    ),
    (
        "log-with-objects-amount",
        {"amount": 2, "objects": ["foo/bar7", "foo/bar3", "foo/bar9"]},
        ["commit9", "commit7"],
    ),
    ("log-with-objects-no-commits", {"objects": ["you-won't-find-me"]}, []),
    ("log-single-object", {"amount": 1, "objects": ["foo/bar10"]}, ["commit10"]),
    ("log-with-prefixes", {"prefixes": ["foo/bar1"]}, ["commit10", "commit1"]),
    ("stop_at_branch_ref", {"stop_at": "main"}, ["commit10"]),
    ("stop_at_branch_ref_expression", {"stop_at": "main~2"}, ["commit10", "commit9", "commit8"]),
]


def test_log_predefined_data(repo, ten_commits):
    for name, options, expected in PREDEFINED:
        assert [c.message for c in repo.log("main", **options)] == expected, name
    # stop_at, stop_at_short_sha
    for stop in (ten_commits[8].id, ten_commits[8].id[:7]):
        assert [c.message for c in repo.log("main", stop_at=stop)] == ["commit10", "commit9"]


def test_log_by_path_through_merges(repo):
    # Ported from lakeFS pkg/api/controller_test.go TestController_CommitsGetBranchCommitLogByPath.
    #                       P              branch-b
    #                      / \
    #  .---A---B---C-----D-----R---N---X-  main
    #               \             /
    #                ---L---M---           branch-a
    def commit(branch, version, paths, name):
        for p in paths:
            repo.put(branch, p, f"{p} v{version}".encode())
        return repo.commit(branch, name).id

    c = {}
    c["A"] = commit(
        "main", 1, ["data/a/a.txt", "data/a/b.txt", "data/a/c.txt", "data/b/b.txt"], "A"
    )
    c["B"] = commit("main", 1, ["data/a/foo.txt", "data/b/bar.txt"], "B")
    c["C"] = commit("main", 2, ["data/a/a.txt"], "C")
    repo.create_branch("branch-a", "main")
    c["L"] = commit("branch-a", 2, ["data/a/foo.txt", "data/b/bar.txt"], "L")
    c["D"] = commit("main", 2, ["data/b/b.txt"], "D")
    repo.create_branch("branch-b", "main")
    c["P"] = commit("branch-b", 1, ["data/c/banana.txt"], "P")
    c["R"] = repo.merge(
        "branch-b", "main", fast_forward=False
    ).commit.id  # lakeFS never fast-forwards
    c["M"] = commit("branch-a", 1, ["data/a/d.txt"], "M")
    c["N"] = repo.merge("branch-a", "main", fast_forward=False).commit.id
    c["X"] = commit("main", 3, ["data/a/a.txt", "data/c/zebra.txt"], "X")
    cases = [
        ({"objects": ["data/a/d.txt"]}, "M"),
        ({"objects": ["data/a/a.txt"]}, "X C A"),
        ({"objects": ["data/c/zebra.txt"]}, "X"),
        (
            {"objects": ["data/a/foo.txt", "data/b/bar.txt", "data/b/b.txt", "data/c/banana.txt"]},
            "P D L B A",
        ),
        ({"objects": ["data/a/c.txt"], "prefixes": ["data/b/"]}, "D L B A"),
        ({"prefixes": ["data/b/"]}, "D L B A"),
        ({"prefixes": ["data/a/", "data/c/"]}, "X M P L C B A"),
        ({"prefixes": ["data/"]}, "X M P D L C B A"),
    ]
    for options, expected in cases:
        assert [c_.id for c_ in repo.log("main", **options)] == [c[n] for n in expected.split()]


def test_log_counts_with_paths(repo):
    # Ported from lakeFS pkg/api/controller_test.go TestController_LogCommitsHandler.
    for i in range(1, 11):
        repo.put("main", f"foo/bar{i}", b"%d" % i)
        repo.commit("main", f"commit{i}")
    assert len(list(repo.log("main", objects=["foo/bar7", "foo/bar3", "foo/bar9"]))) == 3
    assert len(list(repo.log("main", objects=["you-won't-find-me"]))) == 0
    assert len(list(repo.log("main", prefixes=["foo/bar"]))) == 10
    assert len(list(repo.log("main", amount=1))) == 1


def test_no_merges_and_first_parent(repo):
    # lakeFS esti TestLakectlLogNoMergesWithCommitsAndMerges, in the Python API.
    repo.create_branch("side", "main")
    repo.put("side", "s", b"1")
    side = repo.commit("side", "side work")
    repo.put("main", "m", b"1")
    main = repo.commit("main", "main work")
    merge = repo.merge("side", "main").commit
    assert [c.id for c in repo.log("main", amount=3)] == [merge.id, main.id, side.id]
    assert [c.id for c in repo.log("main", no_merges=True, amount=2)] == [main.id, side.id]
    assert side.id not in {c.id for c in repo.log("main", first_parent=True)}


def test_bad_log_arguments(repo):
    for bad in [
        {"amount": -1},
        {"since": datetime(2020, 1, 1)},  # naive
        {"objects": [""]},
        {"prefixes": "foo"},
    ]:
        with pytest.raises(InvalidArgument):
            repo.log("main", **bad)
