"""Damaged files, seen through the public API: truncated or flipped range, metarange and object
files, in the store (local directory and S3) and in the local cache.

* In the store: every read that needs the file fails with CorruptFile naming it; nothing
  damaged is served, and nothing is cached.
* In the cache: the damaged copy is dropped, the file is fetched again from the store, the
  read succeeds, and the cache holds the good copy afterwards.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graveler.client import Graveler
from graveler.core.errors import CorruptFile
from graveler.core.model import RangeSettings
from graveler.repository import Repository
from graveler.storage.committed.cache import STALE_TEMP_SECONDS, TieredCache
from graveler.storage.committed.files import TREE_PREFIX
from tests.objectstore.conftest import aws_env, moto_endpoint, s3_bucket, s3_client  # noqa: F401

SMALL_RANGES = RangeSettings(min_size=0, max_size=800, raggedness=4)
KEYS = [f"tbl/part={i // 10:02d}/f-{i:04d}.csv" for i in range(40)]


def flip(data: bytes) -> bytes:
    damaged = bytearray(data)
    damaged[len(data) // 2] ^= 0x10
    return bytes(damaged)


def truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


DAMAGE: dict[str, Callable[[bytes], bytes]] = {"flipped": flip, "truncated": truncate}


@pytest.fixture(params=["local", "s3"])
def lake(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """Where the repository lives: its namespace and the store options to reach it."""
    if request.param == "local":
        return {"namespace": (tmp_path / "ns").as_uri(), "options": {}}
    bucket = request.getfixturevalue("s3_bucket")
    endpoint = request.getfixturevalue("moto_endpoint")
    return {"namespace": f"s3://{bucket}/lake", "options": {"endpoint_url": endpoint}}


@pytest.fixture
def client(tmp_path: Path, lake: dict[str, Any]) -> Iterator[Callable[[str], Graveler]]:
    """``client(home)`` opens a Graveler on the shared database with its own cache home."""
    opened: list[Graveler] = []

    def open_client(home: str) -> Graveler:
        gv = Graveler(
            home=tmp_path / home,
            database_url=f"sqlite:///{tmp_path / 'refs.db'}",
            store_options=lake["options"],
        )
        opened.append(gv)
        return gv

    yield open_client
    for gv in opened:
        gv.close()


def populate(gv: Graveler, namespace: str) -> Repository:
    """Three commits (tags t1, t2, then main) over KEYS, so there are three metaranges."""
    repo = gv.create_repository("lake", namespace, range_settings=SMALL_RANGES)
    for n, tag in enumerate(("t1", "t2", None)):
        for key in KEYS[n::3] if n < 2 else KEYS:
            repo.put("main", key, f"{key}\n".encode())
        repo.commit("main", f"load {n}")
        if tag:
            repo.create_tag(tag, "main")
    return repo


def targets(repo: Repository) -> list[tuple[str, str, str, str]]:
    """(kind, damage, store key, "REF:PATH" whose read needs that file): every kind of file,
    each damaged both ways, each in a different place so that one does not hide another."""
    mids = {ref: repo.resolve(ref).commit.metarange_id for ref in ("t1", "t2", "main")}
    ranges = repo.committed.ranges(mids["main"])
    assert len(ranges) >= 5, "the test needs more, smaller ranges"

    def first(i: int) -> str:
        return ranges[i].min_key.decode()

    return [
        ("metarange", "flipped", TREE_PREFIX + mids["t1"], "t1:" + KEYS[0]),
        ("metarange", "truncated", TREE_PREFIX + mids["t2"], "t2:" + KEYS[0]),
        ("range", "flipped", TREE_PREFIX + ranges[1].id, "main:" + first(1)),
        ("range", "truncated", TREE_PREFIX + ranges[2].id, "main:" + first(2)),
        ("object", "flipped", repo.stat("main", first(3)).physical_address, "main:" + first(3)),
        ("object", "truncated", repo.stat("main", first(4)).physical_address, "main:" + first(4)),
    ]


def test_damage_in_the_store_is_detected(client, lake, figures):
    repo = populate(client("writer"), lake["namespace"])
    cases = targets(repo)
    for _, damage, key, _ in cases:
        repo.store.put(key, DAMAGE[damage](repo.store.get(key)))
    fresh = client("fresh-reader")
    reader = fresh.repository("lake")  # empty cache: reads the store
    for kind, _, key, where in cases:
        ref, path = where.split(":", 1)
        name = key.rsplit("/", 1)[-1]
        with pytest.raises(CorruptFile, match=name):
            reader.get(ref, path)
        with pytest.raises(CorruptFile), reader.open(ref, path) as fh:
            fh.read()
        if kind != "object":
            with pytest.raises(CorruptFile):  # a scan stops at the first damaged file
                list(reader.iter_objects(ref))
        figures.add("corruption", damaged_in_store_detected=1)
    untouched = repo.committed.ranges(repo.resolve("main").commit.metarange_id)[-1]
    assert reader.get("main", untouched.max_key.decode()) == untouched.max_key + b"\n"
    assert fresh.cache.stats.corrupt_dropped == 0  # nothing damaged was ever cached


def test_damaged_cache_copies_are_refetched(client, lake, figures):
    """Disk-tier copies damaged behind the cache's back are dropped and fetched again. A
    local store keeps none (it is its own disk tier): there the tier must stay empty."""
    writer = client("shared-home")
    repo = populate(writer, lake["namespace"])
    trees = [(k, d, key) for k, d, key, _ in targets(repo) if k != "object"]
    for reference in ("t1", "t2", "main"):
        list(repo.iter_objects(reference))  # every tree file is in the disk cache now
    if lake["namespace"].startswith("file://"):
        copies = [Path(writer.cache.path_of(key[len(TREE_PREFIX) :])) for _, _, key in trees]
        assert trees and not any(path.exists() for path in copies)
        return
    good = {}
    for _, damage, key in trees:
        cached = Path(writer.cache.path_of(key[len(TREE_PREFIX) :]))
        good[cached] = cached.read_bytes()
        cached.write_bytes(DAMAGE[damage](good[cached]))
    reader = client("shared-home")  # a new process adopting the damaged disk tier
    repo2 = reader.repository("lake")
    for reference in ("t1", "t2", "main"):
        for e in repo2.iter_objects(reference):
            assert repo2.get(reference, e.path) == f"{e.path}\n".encode()
    assert reader.cache.stats.corrupt_dropped == len(trees)
    assert all(path.read_bytes() == data for path, data in good.items())
    figures.add("corruption", damaged_in_cache_refetched=len(trees))


def test_a_new_process_leaves_fresh_temporary_files_of_others_alone(tmp_path):
    """Several processes may share a cache directory: a fresh temporary file may be another
    process's write in progress; only stale ones (left by dead processes) are removed."""
    cache_dir = tmp_path / "cache"
    TieredCache(str(cache_dir))
    fresh = cache_dir / "scratch" / ".tmp-live-writer.sst"
    stale = cache_dir / "ab" / ".tmp-dead-writer"
    for path in (fresh, stale):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"partial")
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(stale, (old, old))
    TieredCache(str(cache_dir))  # what a process opening the same home does at start-up
    assert fresh.exists() and not stale.exists()
