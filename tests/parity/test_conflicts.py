"""A pluggable per-key conflict resolver on top of the merge strategies, and lakeFS's
``.lakefs.merge.strategy`` key on merge commits."""

from __future__ import annotations

import pytest

from graveler import KeyConflict, Resolution
from graveler.core.errors import InvalidArgument, MergeConflict, NotFound


@pytest.fixture
def conflicted(repo):
    """main and dev both changed a, b, c differently; dev deleted d, main changed it."""
    for k in "abcd":
        repo.put("main", k, b"base " + k.encode())
    repo.put("main", "same", b"s")
    repo.commit("main", "base")
    repo.create_branch("dev", "main")
    for k in "abc":
        repo.put("dev", k, b"dev " + k.encode())
        repo.put("main", k, b"main " + k.encode())
    repo.delete("dev", "d")
    repo.put("main", "d", b"main d")
    repo.put("dev", "only-dev", b"x")
    repo.commit("dev", "dev work")
    repo.commit("main", "main work")
    return repo


def test_resolver_chooses_per_key_and_defers_to_the_strategy(conflicted):
    repo = conflicted
    seen: list[KeyConflict] = []

    def resolver(c: KeyConflict):
        seen.append(c)
        return {"a": Resolution.SOURCE, "b": "dest"}.get(c.path)

    merged = repo.merge("dev", "main", resolver=resolver, strategy="source-wins").commit
    assert [c.path for c in seen] == ["a", "b", "c", "d"]
    d = next(c for c in seen if c.path == "d")
    assert d.source is None and d.dest is not None and d.base is not None
    assert repo.get(merged.id, "a") == b"dev a" and repo.get(merged.id, "b") == b"main b"
    assert repo.get(merged.id, "c") == b"dev c"  # left to source-wins
    assert "d" not in {e.path for e in repo.iter_objects(merged.id)}  # source-wins: deleted
    assert repo.get(merged.id, "only-dev") == b"x"


def test_unresolved_keys_without_a_strategy_conflict(conflicted):
    repo = conflicted
    head = repo.branch("main").commit_id
    with pytest.raises(MergeConflict) as info:
        repo.merge("dev", "main", resolver=lambda c: "source" if c.path == "a" else None)
    assert info.value.keys == ["b", "c", "d"]
    assert repo.branch("main").commit_id == head
    merged = repo.merge("dev", "main", resolver=lambda c: Resolution.DEST).commit
    assert [repo.get(merged.id, k) for k in "abcd"] == [b"main a", b"main b", b"main c", b"main d"]


def test_a_resolver_that_raises_refuses_the_merge(conflicted):
    repo = conflicted
    head = repo.branch("main").commit_id

    def strict(c: KeyConflict):
        raise ValueError(f"no automatic resolution for {c.path}")

    with pytest.raises(MergeConflict, match="resolver refused 'a'") as info:
        repo.merge("dev", "main", resolver=strict, strategy="dest-wins")
    assert isinstance(info.value.__cause__, ValueError)

    def lookup(c: KeyConflict):
        raise NotFound("a GravelerError passes through unchanged")

    with pytest.raises(NotFound):
        repo.merge("dev", "main", resolver=lookup)
    with pytest.raises(InvalidArgument, match="returned 'theirs'"):
        repo.merge("dev", "main", resolver=lambda c: "theirs")
    with pytest.raises(InvalidArgument):
        repo.merge("dev", "main", resolver="not callable")  # type: ignore[arg-type]
    assert repo.branch("main").commit_id == head


def test_no_conflict_never_calls_the_resolver(repo):
    repo.create_branch("dev", "main")
    repo.put("dev", "x", b"1")
    repo.commit("dev", "x")
    repo.put("main", "y", b"1")
    repo.commit("main", "y")
    calls = []
    repo.merge("dev", "main", resolver=calls.append)
    assert calls == []


def test_merge_records_lakefs_strategy_key(conflicted):
    # lakeFS pkg/graveler/graveler_test.go TestGraveler_PreMergeHook: a merge commit's metadata
    # is the caller's plus ".lakefs.merge.strategy" ("default" without a strategy).
    repo = conflicted
    repo.create_branch("plain", "main")
    repo.put("plain", "p", b"1")
    repo.commit("plain", "p")
    repo.put("main", "q", b"1")
    repo.commit("main", "q")
    merged = repo.merge("plain", "main", metadata={"key1": "val1"}).commit
    assert merged.metadata == {"key1": "val1", ".lakefs.merge.strategy": "default"}
    for strategy in ("dest-wins", "source-wins"):
        repo.create_branch(strategy, "main")
        merged = repo.merge("dev", strategy, strategy=strategy).commit
        assert merged.metadata[".lakefs.merge.strategy"] == strategy
        assert merged.metadata[".graveler.merge.strategy"] == strategy
