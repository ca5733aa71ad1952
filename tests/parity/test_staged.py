"""Staging-only reads: get and list what is staged on a branch, nothing committed."""

from __future__ import annotations

import pytest

from graveler.core.errors import BranchNotFound, ObjectNotFound
from graveler.versioning.commit import _seal, update_branch


def test_get_staging_only(repo):
    # Ported from lakeFS pkg/graveler/graveler_v2_test.go TestGravelerGet: the "staging only
    # flag" cases (not staged; staged and different in commit; same in staging and commit;
    # staging tombstone).
    repo.put("main", "some/key/1", b"committed")
    repo.put("main", "some/key/2", b"kept")
    repo.commit("main", "c")
    with pytest.raises(ObjectNotFound):  # staging only flag: nothing staged
        repo.stat_staged("main", "some/key/1")
    repo.put("main", "some/key/1", b"staged")  # different in commit
    assert repo.get_staged("main", "some/key/1") == b"staged"
    assert repo.stat_staged("main", "some/key/1").size == 6
    repo.put("main", "some/key/2", b"kept")  # same in staging and in commit
    with pytest.raises(ObjectNotFound):
        repo.stat_staged("main", "some/key/2")
    assert repo.get("main", "some/key/2") == b"kept"  # the normal read still finds it
    repo.delete("main", "some/key/1")  # staging tombstone
    with pytest.raises(ObjectNotFound):
        repo.stat_staged("main", "some/key/1")
    with pytest.raises(BranchNotFound):
        repo.stat_staged("nope", "some/key/1")


def test_staged_reads_see_sealed_tokens(repo):
    repo.put("main", "a", b"sealed")
    update_branch(repo, "main", lambda b: _seal(repo.name, b))  # a commit in progress
    repo.put("main", "b", b"staged")
    assert repo.get_staged("main", "a") == b"sealed"
    assert [e.path for e in repo.iter_staged("main")] == ["a", "b"]


def test_list_staged(repo):
    repo.put("main", "t/x/1", b"committed")
    repo.put("main", "t/y", b"committed")
    repo.put("main", "keep", b"k")
    repo.commit("main", "c")
    repo.put("main", "t/x/1", b"changed")
    repo.put("main", "t/x/2", b"new")
    repo.put("main", "t/z", b"new")
    repo.put("main", "keep", b"k")  # identical: not staged
    repo.delete("main", "t/y")  # a deletion is not an entry
    assert [e.path for e in repo.iter_staged("main")] == ["t/x/1", "t/x/2", "t/z"]
    assert [e.path for e in repo.iter_staged("main", "t/x/", after="t/x/1")] == ["t/x/2"]
    page = repo.list_staged("main", "t/")
    assert page.common_prefixes == ["t/x/"] and [e.path for e in page.objects] == ["t/z"]
    first = repo.list_staged("main", delimiter=None, amount=2)
    assert [e.path for e in first.objects] == ["t/x/1", "t/x/2"] and first.has_more
    rest = repo.list_staged("main", delimiter=None, after=first.next_after)
    assert [e.path for e in rest.objects] == ["t/z"] and not rest.has_more
    repo.commit("main", "all")
    assert list(repo.iter_staged("main")) == []
