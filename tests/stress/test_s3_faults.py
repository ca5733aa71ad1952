"""Graveler on S3 through a faulty network: a loopback proxy in front of moto answers a share of
requests with 500 InternalError, 503 SlowDown, slow responses, responses slower than the
client's read timeout, connections dropped before or after the request reached S3, and GET
bodies cut in half (:class:`tests.objectstore.helpers.FaultProxy`).

Every graveler operation must still succeed (the store retries with backoff) and every byte
read back must be what was written. Under a permanent outage operations fail with a clear
StorageError, and staged changes survive it: the commit succeeds once S3 is back.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.retries import standard

from graveler.client import Graveler
from graveler.core.errors import StorageError
from graveler.maintenance.fsck import fsck
from graveler.repository import Repository
from graveler.storage.objectstore.s3 import S3ObjectStore
from tests.objectstore.conftest import aws_env, moto_endpoint, s3_bucket, s3_client  # noqa: F401
from tests.objectstore.helpers import FAULT_KINDS, FaultProxy, FlakyProxy

FAULT_RATE = 0.25
MiB = 1 << 20


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrink botocore's throttling backoff base from 1 s to 10 ms (test speed only; the
    non-throttling base, 50 ms, is left alone)."""
    config = getattr(standard.ExponentialBackoff, "_DEFAULT_BACKOFF_CONFIG", None)
    if isinstance(config, dict) and "throttling_base_scale" in config:
        monkeypatch.setitem(config, "throttling_base_scale", 0.01)


@pytest.fixture
def proxy(moto_endpoint: str, fast_backoff: None, figures) -> Iterator[FaultProxy]:  # noqa: F811
    with FaultProxy(moto_endpoint, rate=0.0, seed=figures.seed, timeout_seconds=1.3) as p:
        yield p


def open_client(home: Path, proxy: FaultProxy, max_attempts: int) -> Graveler:
    """A client whose tree cache holds (almost) nothing, so reads go to S3 too."""
    options = {
        "endpoint_url": proxy.endpoint,
        "max_attempts": max_attempts,
        "connect_timeout": 1.0,
        "read_timeout": 1.0,
    }
    return Graveler(
        home=home,
        database_url=f"sqlite:///{home / 'refs.db'}",
        cache_ram_bytes=1,
        cache_disk_bytes=1,
        store_options=options,
    )


def one_round(repo: Repository, i: int, written: dict[str, str]) -> int:
    """Branch, put, commit, merge, diff, read back, list, delete; returns operations done."""
    branch = f"round-{i}"
    repo.create_branch(branch, "main")
    for n in range(6):
        size = 9 * MiB if (i, n) == (0, 0) else 1000 + 3000 * n  # one multipart upload
        data = hashlib.sha256(f"{i}/{n}".encode()).digest() * (size // 32)
        repo.put(branch, f"r{i}/obj-{n}.bin", data)
        written[f"r{i}/obj-{n}.bin"] = hashlib.sha256(data).hexdigest()
    repo.commit(branch, f"round {i}")
    repo.merge(branch, "main")
    added = {d.path for d in repo.diff("main~1", "main")}
    assert added == {f"r{i}/obj-{n}.bin" for n in range(6)}
    older = sorted(written)[: 6 * i]
    sample = [f"r{i}/obj-{n}.bin" for n in range(1, 6)] + older[i % max(len(older), 1) :][:2]
    for path in sample:
        assert hashlib.sha256(repo.get("main", path)).hexdigest() == written[path], path
    assert len(repo.list("main", f"r{i}/").objects) == 6
    repo.delete_branch(branch)
    return 6 + 5 + len(sample)


def test_operations_retry_through_every_kind_of_fault(tmp_path, proxy, s3_bucket, level, figures):  # noqa: F811
    gv = open_client(tmp_path / "home", proxy, max_attempts=10)
    with gv:
        repo = gv.create_repository("lake", f"s3://{s3_bucket}/lake")
        proxy.rate = FAULT_RATE
        written: dict[str, str] = {}
        operations = sum(one_round(repo, i, written) for i in range(level.fault_rounds))
        report = fsck(repo, verify_objects=True)  # reads every object back through the faults
        proxy.rate = 0.0
    assert report.clean and report.objects == len(written), report.problems
    assert set(proxy.injected) == set(FAULT_KINDS), proxy.injected
    area = "S3 faults (retried)"
    figures.add(area, operations=operations + 1, requests=proxy.requests, data_lost=0)
    figures.add(area, faults_injected=sum(proxy.injected.values()), **proxy.injected)


def test_permanent_outage_fails_clearly_and_keeps_staging(tmp_path, proxy, s3_bucket, figures):  # noqa: F811
    with open_client(tmp_path / "home", proxy, max_attempts=3) as gv:
        repo = gv.create_repository("lake", f"s3://{s3_bucket}/lake")
        repo.put("main", "before/a.txt", b"committed before the outage")
        repo.commit("main", "before")
        repo.put("main", "staged/b.txt", b"staged before the outage")
        head = repo.resolve("main").commit.id
        proxy.outage = True
        for attempt in (
            lambda: repo.put("main", "during/c.txt", b"never acknowledged"),
            lambda: repo.commit("main", "during the outage"),
            lambda: repo.get("main", "before/a.txt"),
        ):
            with pytest.raises(StorageError, match=rf"s3://{s3_bucket}/lake.*attempt"):
                attempt()
        proxy.outage = False
        assert repo.resolve("main").commit.id == head
        assert [d.path for d in repo.diff_uncommitted("main")] == ["staged/b.txt"]
        c = repo.commit("main", "after the outage")
        assert repo.get(c.id, "staged/b.txt") == b"staged before the outage"
        assert sorted(e.path for e in repo.iter_objects("main")) == [
            "before/a.txt",
            "staged/b.txt",
        ]
        assert fsck(repo).clean
    faults = sum(proxy.injected.values())
    figures.add("S3 permanent outage", failed_operations=3, faults_injected=faults, data_lost=0)


def test_streamed_body_cut_off_is_resumed_where_it_broke(moto_endpoint, aws_env, s3_bucket):  # noqa: F811
    with FlakyProxy(moto_endpoint, failures=0) as proxy:
        store = S3ObjectStore(s3_bucket, "p", endpoint_url=proxy.endpoint, max_attempts=2)
        data = os.urandom(3 * MiB)
        store.put("k", data)
        proxy.truncate_gets = 2  # the first GET and the first resumed GET break off
        with store.open("k") as fh:
            assert fh.read() == data
        assert proxy.truncate_gets == 0
        proxy.truncate_gets = 1
        with store.open("k") as fh:  # the body breaks off, then S3 is unreachable: give up
            first = fh.read(1 << 20)
            proxy.reset(failures=None)
            with pytest.raises(StorageError, match=r"resuming s3://.*/p/k .*2 attempt"):
                fh.read()
        assert first == data[: 1 << 20]
