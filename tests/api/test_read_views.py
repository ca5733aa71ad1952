"""Reads by branch name are served from cached views (``graveler.views.cache``,
``graveler.storage.refs.branch_views``): these tests check that a read always sees what was
committed before it, by another process, another client or this one, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from graveler.client import Graveler
from graveler.core.errors import InvalidKey, ObjectNotFound, RefNotFound
from graveler.repository import Repository
from graveler.storage.refs import branch_views

TOP = Path(__file__).resolve().parents[2]


class RemoteWriter:
    """Drives ``tests/api/remote_writer.py`` in a child process."""

    def __init__(self, url: str, home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.api.remote_writer", url, str(home)],
            cwd=TOP,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._answer() == "ready"

    def __call__(self, *command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        assert self._answer() == "ok", f"the writer failed on {command}"

    def _answer(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0


@pytest.fixture
def remote(repo: Repository, database_url: str, tmp_path: Path) -> Iterator[RemoteWriter]:
    writer = RemoteWriter(database_url, tmp_path / "remote-home")
    yield writer
    writer.close()


def _seen(repo: Repository, ref: str, path: str) -> bytes | None:
    """What every read by ``ref`` says about ``path`` (they must agree)."""
    exists = repo.exists(ref, path)
    listed = [e.path for e in repo.iter_objects(ref)]
    many = repo.stat_many(ref, [path])[0]
    try:
        data: bytes | None = repo.get(ref, path)
    except ObjectNotFound:
        data = None
    assert exists == (data is not None) == (path in listed) == (many is not None)
    return data


def test_reads_by_branch_see_another_process_at_once(repo: Repository, remote: RemoteWriter):
    assert _seen(repo, "main", "a") is None  # the view of main is cached from here on
    remote("put", "main", "a", "one")
    assert _seen(repo, "main", "a") == b"one"
    remote("put", "main", "a", "two")
    assert _seen(repo, "main", "a") == b"two"
    remote("commit", "main")
    assert _seen(repo, "main", "a") == b"two"
    assert repo.branch("main").commit_id == repo.resolve("main").commit.id
    remote("delete", "main", "a")
    assert _seen(repo, "main", "a") is None
    remote("reset", "main")
    assert _seen(repo, "main", "a") == b"two"


def test_branches_made_and_dropped_elsewhere(repo: Repository, remote: RemoteWriter):
    with pytest.raises(RefNotFound):
        repo.stat("dev", "a")
    remote("branch", "dev", "main")
    remote("put", "dev", "a", "on dev")
    assert _seen(repo, "dev", "a") == b"on dev"
    remote("drop", "dev")
    with pytest.raises(RefNotFound):
        repo.stat("dev", "a")


def test_reads_see_another_client_of_this_process(repo: Repository, database_url: str, tmp_path):
    with Graveler(home=tmp_path / "other", database_url=database_url) as other:
        theirs = other.repository("lake")
        assert _seen(repo, "main", "k") is None
        theirs.put("main", "k", b"theirs")
        assert _seen(repo, "main", "k") == b"theirs"
        theirs.commit("main", "c")
        repo.put("main", "k", b"mine")
        assert _seen(theirs, "main", "k") == b"mine"


def test_a_deleted_branch_gives_way_to_a_tag_of_that_name(repo: Repository):
    repo.put("main", "k", b"v1")
    first = repo.commit("main", "first")
    repo.create_branch("release", "main")
    repo.put("release", "k", b"v2")
    assert repo.get("release", "k") == b"v2"
    repo.delete_branch("release")
    repo.create_tag("release", first.id)
    assert repo.get("release", "k") == b"v1"


def test_a_read_by_tag_asks_for_a_branch_of_that_name_once(
    repo: Repository, monkeypatch: pytest.MonkeyPatch
):
    repo.put("main", "k", b"v")
    repo.create_tag("v1", repo.commit("main", "one").id)
    asked: list[str] = []
    for store, method in ((repo.refs, "get_branch"), (repo.staging, "branch_view")):
        real = getattr(store, method)
        spy = lambda name, b, real=real: asked.append(b) or real(name, b)  # noqa: E731
        monkeypatch.setattr(store, method, spy)
    assert repo.get("v1", "k") == b"v"
    assert asked == ["v1"]  # the view's lookup; resolving the tag does not ask again


def test_two_repositories_keep_a_branch_view_each(gv: Graveler, repo: Repository, tmp_path):
    other = gv.create_repository("other", (tmp_path / "other-ns").as_uri())
    for r in (repo, other):
        r.put("main", "k", r.name.encode())
        r.commit("main", "k")
    built: list[str] = []
    cache = gv.read_cache
    real = cache._branch_read
    monkeypatch_target = lambda r, b: built.append(r.name) or real(r, b)  # noqa: E731
    cache._branch_read = monkeypatch_target  # type: ignore[method-assign]
    try:
        for _ in range(3):
            assert repo.get("main", "k") == b"lake" and other.get("main", "k") == b"other"
    finally:
        del cache._branch_read
    if gv.database_url.startswith("sqlite"):  # SQLite: views are kept while nothing changes
        assert sorted(built) == ["lake", "other"]  # one view each, then reused
    else:  # PostgreSQL: one statement per read, each repository its own
        assert sorted(built) == ["lake"] * 3 + ["other"] * 3


@pytest.mark.parametrize("held", [0, 3, 1000])
def test_staging_held_in_memory_or_looked_up(
    repo: Repository, monkeypatch: pytest.MonkeyPatch, held: int
):
    """Views hold staging in memory up to STAGED_IN_MEMORY entries, else look it up per key
    and list it with queries: both answer alike (and as the committed tree would)."""
    monkeypatch.setattr(branch_views, "STAGED_IN_MEMORY", held)
    for i in range(6):
        repo.put("main", f"d/{i}", f"committed {i}".encode())
    repo.commit("main", "base")
    repo.put("main", "d/1", b"changed")
    repo.delete("main", "d/2")
    repo.put("main", "e/new", b"added")
    repo.commit("main", "sealed")
    repo.put("main", "d/3", b"staged twice")
    repo.put("main", "d/3", b"staged again")
    expected = {
        "d/0": b"committed 0",
        "d/1": b"changed",
        "d/3": b"staged again",
        "d/4": b"committed 4",
        "d/5": b"committed 5",
        "e/new": b"added",
    }
    assert {e.path: repo.read_entry(e) for e in repo.iter_objects("main")} == expected
    assert [e.path for e in repo.list("main", "d/", delimiter=None).objects] == [
        p for p in expected if p.startswith("d/")
    ]
    assert {p: repo.get("main", p) for p in expected} == expected
    assert not repo.exists("main", "d/2")
    found = repo.stat_many("main", ["d/2", "d/3", "zz"])
    assert [e.path if e else None for e in found] == [None, "d/3", None]


def test_one_value_under_two_paths_keeps_both_paths(repo: Repository):
    entry = repo.put("main", "first", b"shared bytes")
    repo.link(
        "main",
        "second",
        entry.physical_address,
        checksum=entry.checksum,
        size=entry.size,
        mtime=entry.mtime,
    )
    commit = repo.commit("main", "c")
    for ref in ("main", commit.id):
        assert repo.stat(ref, "first").path == "first"
        assert repo.stat(ref, "second").path == "second"
        assert [e.path for e in repo.stat_many(ref, ["second", "first"]) if e] == [
            "second",
            "first",
        ]


@pytest.mark.parametrize("bad", ["", "nul\x00", "x" * 1025, b"bytes", 7, "\udcff"])
def test_bad_paths_are_refused_by_every_read(repo: Repository, bad: object):
    commit = repo.resolve("main").commit.id
    for ref in ("main", commit):
        with pytest.raises(InvalidKey):
            repo.stat(ref, bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidKey):
            repo.exists(ref, bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidKey):
            repo.stat_many(ref, ["fine", bad])  # type: ignore[list-item]


def test_batched_lookups_keep_each_tree_apart(repo: Repository, monkeypatch) -> None:
    """stat_many remembers entries by key per tree: a later commit (another tree) answers
    with its own entries, absent keys are looked up again, and a full map starts over."""
    from graveler.views import cache as views

    monkeypatch.setattr(repo.read_cache, "_entry_limit", 3)
    repo.upload_many("main", [(f"k/{i}", b"v1-%d" % i) for i in range(6)])
    first = repo.commit("main", "first").id
    keys = [f"k/{i}" for i in range(6)] + ["k/missing"]
    for _ in range(2):  # cold, then warm (and past the limit of 3 entries per tree)
        got = repo.stat_many(first, keys)
        assert [e.path if e else None for e in got] == [*keys[:6], None]
    repo.put("main", "k/2", b"changed")
    repo.put("main", "k/missing", b"now here")
    second = repo.commit("main", "second").id
    assert repo.stat_many(second, ["k/2", "k/missing"])[1] is not None
    assert repo.get(second, "k/2") == b"changed"
    assert repo.stat_many(second, ["k/2"])[0] == repo.stat(second, "k/2")
    assert repo.stat_many(first, ["k/2"])[0] == repo.stat(first, "k/2")
    assert repo.stat_many(first, ["k/2"])[0] != repo.stat(second, "k/2")
    assert repo.stat_many(first, ["k/missing"]) == [None]
    for n in range(views.TREE_MAPS + 2):  # more trees than maps kept: still right
        repo.put("main", "k/0", b"round %d" % n)
        tree = repo.commit("main", f"round {n}").id
        assert repo.stat_many(tree, ["k/0"])[0] == repo.stat(tree, "k/0")
