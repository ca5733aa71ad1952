"""Single-process garbage collection on real repositories (SQLite and PostgreSQL, real SST
files on a local namespace), checked against the reference model in ``tests.gc.model``."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest

from graveler.core.errors import ObjectNotFound
from graveler.maintenance.fsck import fsck
from graveler.maintenance.gc import RetentionRules, collect_garbage
from graveler.maintenance.gc.ledger import EXPIRED_PREFIX
from graveler.repository import Repository
from tests.gc.model import model_garbage, staged_addresses
from tests.gc.scenario import DAY, GRACE, random_scenario


def _age(repo: Repository, key: str, when) -> None:
    path = repo.store.local_path(key)
    assert path is not None
    os.utime(path, (when.timestamp(), when.timestamp()))


def test_story_deleted_branches_and_aged_commits(repo: Repository) -> None:
    repo.create_branch("dev", "main")  # from the empty initial commit
    a1 = repo.put("main", "a", b"a1")
    b1 = repo.put("main", "b", b"b1")
    c1 = repo.commit("main", "first")
    d1 = repo.put("dev", "d", b"d1")
    repo.commit("dev", "dev work")
    repo.create_tag("release", "dev")
    repo.delete_branch("dev")  # its data lives on through the tag
    repo.create_branch("tmp", "main")
    t1 = repo.put("tmp", "t", b"t1")
    repo.commit("tmp", "scratch work")
    repo.delete_branch("tmp")  # dangling: expires with the default window
    a2 = repo.put("main", "a", b"a2")
    repo.delete("main", "b")
    c2 = repo.commit("main", "second")
    repo.link("main", "restored/b", b1.physical_address)  # staged, not committed
    now = c2.creation_date + 30 * DAY
    repo.store.put("data/zz/old-upload", b"x")
    repo.store.put("data/zz/new-upload", b"y")
    _age(repo, "data/zz/new-upload", now - timedelta(minutes=5))
    rules = RetentionRules(default_days=7)

    expected = {a1.physical_address, t1.physical_address, "data/zz/old-upload"}
    assert model_garbage(repo, rules, now, GRACE) == expected
    dry = collect_garbage(repo, rules, grace=GRACE, now=now, dry_run=True)
    assert {o.key for o in dry.selected} == expected and dry.deleted == 0
    assert all(repo.store.exists(k) for k in expected)

    done = collect_garbage(repo, rules, grace=GRACE, now=now)
    assert {o.key for o in done.selected} == expected and done.deleted == 3
    assert not any(repo.store.exists(k) for k in expected)
    assert repo.get("main", "a") == b"a2" and repo.get("main", "restored/b") == b"b1"
    assert repo.get("release", "d") == b"d1" and repo.store.exists(d1.physical_address)
    assert repo.store.exists(a2.physical_address) and repo.store.exists("data/zz/new-upload")
    with pytest.raises(ObjectNotFound):
        repo.get(c1.id, "a")  # the expired commit is still listed, its bytes are gone
    assert [e.path for e in repo.iter_objects(c1.id)] == ["a", "b"]
    again = collect_garbage(repo, rules, grace=GRACE, now=now)
    assert again.selected == ()


@pytest.mark.parametrize("seed", range(4))
def test_random_histories_match_the_model(repo: Repository, seed: int) -> None:
    sc = random_scenario(repo, seed)
    expected = model_garbage(repo, sc.rules, sc.now, sc.grace)
    before = {i.key for i in repo.store.list("")}
    staged = staged_addresses(repo)
    result = collect_garbage(repo, sc.rules, grace=sc.grace, now=sc.now)
    selected = {o.key for o in result.selected}
    assert selected == expected
    assert not selected & staged, "a staged object was collected"
    assert not selected & sc.young, "an object inside the grace period was collected"
    after = {i.key for i in repo.store.list("")}
    ledger = {k for k in after if k.startswith(EXPIRED_PREFIX)}  # what fsck reads
    assert after - ledger == before - expected
    assert fsck(repo).clean  # the expired commits' objects are expired, not missing
    for b in repo.list_branches():  # every branch still reads completely
        for e in repo.iter_objects(b.name):
            repo.get(b.name, e.path)
    for t in repo.list_tags():
        for e in repo.iter_objects(t.name):
            repo.get(t.name, e.path)


def test_a_missing_tree_file_stops_collection_before_deleting(repo: Repository) -> None:
    repo.put("main", "a", b"1")
    c = repo.commit("main", "one")
    repo.store.put("data/zz/garbage", b"x")
    mid = c.metarange_id
    repo.store.delete("_graveler/" + repo.committed.ranges(mid)[0].id)
    with pytest.raises(ObjectNotFound, match="garbage collection stops"):
        collect_garbage(repo, grace=timedelta(0), now=c.creation_date + 60 * DAY)
    assert repo.store.exists("data/zz/garbage")


def test_negative_grace_is_refused(repo: Repository) -> None:
    from graveler.core.errors import InvalidArgument

    with pytest.raises(InvalidArgument):
        collect_garbage(repo, grace=timedelta(hours=-1))
