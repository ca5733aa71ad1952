"""Tree files through the tiered cache: write counts, corruption handling, LRU budgets,
single-flight fetches."""

from __future__ import annotations

import os
import threading
import time

import pytest

from graveler.core.errors import CorruptFile
from graveler.core.model import RangeSettings
from graveler.storage.committed.apply import Change
from graveler.storage.committed.cache import TieredCache
from graveler.storage.committed.files import TREE_PREFIX
from graveler.storage.committed.manager import CommittedManager
from tests.committed.conftest import make_record

SETTINGS = RangeSettings(min_size=0, max_size=2000, raggedness=16)
KEYS = [f"tbl/part={i // 100:03d}/file-{i:05d}.parquet".encode() for i in range(3000)]


def build(cm: CommittedManager) -> str:
    mid, _ = cm.write_records(make_record(k, "v1") for k in KEYS)
    return mid


def test_one_key_commit_writes_one_range_and_one_metarange(manager_factory):
    cm = manager_factory(SETTINGS)
    base = build(cm)
    assert len(cm.ranges(base)) > 50
    before = cm.files.files_written
    _new, summary = cm.apply(base, [Change(KEYS[1234], make_record(KEYS[1234], "v2"))])
    assert cm.files.files_written - before == 2
    assert (summary.changed, summary.ranges_written) == (1, 1)
    assert summary.ranges_reused == len(cm.ranges(base)) - 1


def test_same_identity_is_not_a_change(manager_factory):
    cm = manager_factory(SETTINGS)
    base = build(cm)
    rec = make_record(KEYS[7], "v1")._replace(value=b"another-physical-address")
    new, summary = cm.apply(base, [Change(KEYS[7], rec)])
    assert new == base and summary.changes == 0


def corrupt_one_byte(data: bytes, where: int) -> bytes:
    b = bytearray(data)
    b[where] ^= 0x5A
    return bytes(b)


@pytest.mark.parametrize("where", [0.1, 0.5, 0.9])
def test_corrupt_range_in_store_is_refused(manager_factory, store, where):
    cm = manager_factory(SETTINGS)
    mid = build(cm)
    rid = cm.ranges(mid)[3].id
    data = store.get(TREE_PREFIX + rid)
    store.put(TREE_PREFIX + rid, corrupt_one_byte(data, int(len(data) * where)))
    fresh = manager_factory(SETTINGS, TieredCache(None))  # empty cache: must read the store
    with pytest.raises(CorruptFile):
        fresh.get(mid, cm.ranges(mid)[3].min_key)


def test_corrupt_metarange_in_store_is_refused(manager_factory, store):
    cm = manager_factory(SETTINGS)
    mid = build(cm)
    data = store.get(TREE_PREFIX + mid)
    store.put(TREE_PREFIX + mid, corrupt_one_byte(data, len(data) // 3))
    with pytest.raises(CorruptFile):
        manager_factory(SETTINGS, TieredCache(None)).ranges(mid)


def test_file_renamed_to_wrong_id_is_refused(manager_factory, store):
    cm = manager_factory(SETTINGS)
    mid = build(cm)
    a, b = cm.ranges(mid)[0].id, cm.ranges(mid)[1].id
    store.put(TREE_PREFIX + a, store.get(TREE_PREFIX + b))  # valid SST, wrong name
    with pytest.raises(CorruptFile, match="hashes to"):
        manager_factory(SETTINGS, TieredCache(None)).get(mid, KEYS[0])


def test_corrupt_disk_cache_copy_is_dropped_and_refetched(manager_factory, tmp_path):
    cache = TieredCache(str(tmp_path / "cache"))
    cm = manager_factory(SETTINGS, cache)
    mid = build(cm)
    rid = cm.ranges(mid)[5].id
    path = cache.path_of(rid)
    with open(path, "rb") as fh:
        data = fh.read()
    with open(path, "wb") as fh:
        fh.write(corrupt_one_byte(data, len(data) // 2))
    cache.clear_ram()
    key = cm.ranges(mid)[5].min_key
    assert cm.get(mid, key) == make_record(key, "v1")
    assert cache.stats.corrupt_dropped == 1
    with open(path, "rb") as fh:
        assert fh.read() == data  # the good copy replaced the bad one


def test_truncated_disk_copy_is_refetched(manager_factory, tmp_path):
    cache = TieredCache(str(tmp_path / "cache"))
    cm = manager_factory(SETTINGS, cache)
    mid = build(cm)
    with open(cache.path_of(mid), "r+b") as fh:
        fh.truncate(10)
    cache.clear_ram()
    assert len(cm.ranges(mid)) > 0
    assert cache.stats.corrupt_dropped == 1


def test_disk_tier_is_reused_by_a_new_process_cache(manager_factory, tmp_path, store):
    cache = TieredCache(str(tmp_path / "cache"))
    mid = build(manager_factory(SETTINGS, cache))
    later = TieredCache(str(tmp_path / "cache"))  # adopts files left on disk
    cm2 = manager_factory(SETTINGS, later)
    assert cm2.get(mid, KEYS[42]) is not None
    assert later.stats.fetches == 0 and later.stats.disk_hits >= 2


def test_ram_and_disk_budgets_evict_lru(tmp_path):
    cache = TieredCache(str(tmp_path / "c"), ram_bytes=250, disk_bytes=250)
    for i in range(5):
        fid = f"{i:064x}"
        cache.put_decoded(fid, object(), 100)
        cache.put_bytes(fid, b"x" * 100)
    assert len(cache._ram.items) == 2 and cache._ram.used <= 250
    remaining = [p for p in (tmp_path / "c").rglob("*") if p.is_file()]
    assert len(remaining) == 2


def test_concurrent_fetches_of_one_file_happen_once():
    cache = TieredCache(None)
    calls = []
    gate = threading.Event()

    def fetch() -> bytes:
        calls.append(1)
        gate.wait(5)
        return b"payload"

    results: list[bytes] = []

    def reader() -> None:
        results.append(cache.get("f" * 64, fetch, lambda d: d.upper(), len))

    threads = [threading.Thread(target=reader) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    gate.set()
    for t in threads:
        t.join()
    assert calls == [1] and results == [b"PAYLOAD"] * 8


def test_failed_fetch_is_not_cached_and_propagates():
    cache = TieredCache(None)

    def bad(_: bytes) -> bytes:
        raise CorruptFile("nope")

    with pytest.raises(CorruptFile):
        cache.get("a" * 64, lambda: b"x", bad, len)
    assert cache.get("a" * 64, lambda: b"x", lambda d: d, len) == b"x"


def test_derived_objects_stay_in_ram_and_are_built_once(tmp_path):
    cache = TieredCache(str(tmp_path / "c"))
    calls = []

    def build() -> dict[str, int]:
        calls.append(1)
        return {"a": 1}

    assert cache.derived("x#index", build, len) == {"a": 1}
    assert cache.derived("x#index", build, len) == {"a": 1}
    assert calls == [1]
    assert not [p for p in (tmp_path / "c").rglob("*") if p.is_file()]


def test_large_batches_use_a_whole_tree_index(manager_factory):
    cm = manager_factory(SETTINGS)
    mid = build(cm)
    found = cm.get_many(mid, [*KEYS[::10], b"absent"])
    assert [r.key if r else None for r in found] == [*KEYS[::10], None]
    assert cm.files.cache.peek(mid + "#index") is not None


def test_writes_fill_the_disk_tier(manager_factory, tmp_path):
    cache = TieredCache(str(tmp_path / "cache"))
    cm = manager_factory(SETTINGS, cache)
    mid = build(cm)
    for fid in [mid, *(r.id for r in cm.ranges(mid))]:
        assert os.path.getsize(cache.path_of(fid)) > 0


def test_a_torn_tree_file_is_replaced_when_the_same_tree_is_written_again(tmp_path):
    """Tree files are written in place under their content address; when the name is taken,
    say by a file a crash left torn, the new copy replaces it atomically (flushed before it
    is renamed in), so writing the same tree again repairs it."""
    from graveler.storage.objectstore.local import LocalObjectStore

    store = LocalObjectStore(str(tmp_path / "ns"))
    mid = build(CommittedManager(store, TieredCache(None), SETTINGS))
    rid = CommittedManager(store, TieredCache(None), SETTINGS).ranges(mid)[3].id
    path = tmp_path / "ns" / (TREE_PREFIX + rid)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])  # what a power loss may leave
    with pytest.raises(CorruptFile):
        CommittedManager(store, TieredCache(None), SETTINGS).files.range(rid)
    assert build(CommittedManager(store, TieredCache(None), SETTINGS)) == mid
    repaired = CommittedManager(store, TieredCache(None), SETTINGS).files.range(rid)
    assert repaired.keys == [k for k in KEYS if repaired.keys[0] <= k <= repaired.keys[-1]]
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".graveler-tmp")]
