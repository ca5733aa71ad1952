"""Imports run in the background (``repo.imports``), on SQLite and PostgreSQL: started at
once, followed from another client, canceled between batches, and settled when the process
running them stops (a heartbeat and a lease)."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graveler import Graveler
from graveler.core.errors import Conflict, DirtyBranch, NotFound, ProtectionRuleBlocked
from graveler.core.model import ImportState
from graveler.versioning import import_sources, imports
from graveler.versioning.import_jobs import LEASE_ENV
from graveler.versioning.import_sources import ImportSource


@pytest.fixture(autouse=True)
def short_lease(monkeypatch):
    """A one-second lease: heartbeats every 0.1 s."""
    monkeypatch.setenv(LEASE_ENV, "1")


@pytest.fixture
def source(tmp_path) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    for n in range(7):
        (root / f"f{n}").write_bytes(b"%d" % n)
    return root


@pytest.fixture
def gate(monkeypatch):
    """Holds the import when it reads ``f3`` until the test opens the gate (two objects per
    batch, so two batches are ingested by then)."""
    opened = threading.Event()
    reached = threading.Event()
    real = import_sources.stored_sha256

    def held(store, key, *args):
        if key.endswith("f3"):
            reached.set()
            assert opened.wait(30), "the test never opened the gate"
        return real(store, key, *args)

    monkeypatch.setattr(import_sources, "stored_sha256", held)
    monkeypatch.setattr(imports, "BATCH", 2)
    return reached, opened


def test_an_import_runs_in_the_background(gv, repo, source, database_url, tmp_path):
    job = repo.imports.start(
        "main", [ImportSource.prefix(source.as_uri(), "in/")], message="bg", metadata={"k": "v"}
    )
    assert job.state is ImportState.RUNNING and job.sources == (
        ("common_prefix", source.as_uri(), "in/"),
    )
    done = repo.imports.wait(job.id, timeout=30)
    assert done.completed and done.ingested == 7 and done.error is None
    head = repo.branch("main").commit_id
    assert done.commit_id == head and done.metarange_id == repo.get_commit(head).metarange_id
    assert repo.get_commit(head).metadata["k"] == "v"
    with Graveler(home=tmp_path / "other", database_url=database_url) as other:  # any worker
        seen = other.repository(repo.name).imports.status(job.id)
        assert seen == done
    with pytest.raises(Conflict, match="completed"):
        repo.imports.cancel(job.id)
    with pytest.raises(NotFound):
        repo.imports.status("0" * 20)
    with pytest.raises(NotFound):
        repo.imports.status("../x")


def test_problems_found_at_once_record_nothing(repo, source):
    repo.put("main", "dirty", b"1")
    with pytest.raises(DirtyBranch):
        repo.imports.start("main", [ImportSource.prefix(source.as_uri())])
    repo.reset("main")
    repo.add_protection_rule("ma*")
    with pytest.raises(ProtectionRuleBlocked):
        repo.imports.start("main", [ImportSource.prefix(source.as_uri())])


def test_a_failure_is_the_status(repo, source):
    job = repo.imports.start("main", [ImportSource.prefix(source.as_uri())])
    repo.imports.wait(job.id, timeout=30)
    again = repo.imports.start("main", [ImportSource.prefix(source.as_uri())])
    failed = repo.imports.wait(again.id, timeout=30)
    assert failed.state is ImportState.FAILED and "changes nothing" in (failed.error or "")
    assert repo.imports.cancel(again.id).state is ImportState.FAILED  # stays as it is


def test_cancel_stops_a_running_import(repo, source, gate):
    reached, opened = gate
    head = repo.branch("main").commit_id
    job = repo.imports.start("main", [ImportSource.prefix(source.as_uri(), "in/")])
    assert reached.wait(30)
    deadline = time.monotonic() + 10
    while repo.imports.status(job.id).ingested < 2:  # progress from the runner's heartbeat
        assert time.monotonic() < deadline
        time.sleep(0.05)
    canceled = repo.imports.cancel(job.id)
    assert canceled.state is ImportState.CANCELED and "Canceled" in (canceled.error or "")
    opened.set()
    time.sleep(0.5)  # the runner stops at its next batch
    final = repo.imports.status(job.id)
    assert final.state is ImportState.CANCELED and final.updated == canceled.updated
    assert repo.branch("main").commit_id == head
    assert list(repo.iter_staged("main")) == [] and list(repo.iter_objects("main")) == []
    assert repo.imports.cancel(job.id).state is ImportState.CANCELED  # twice is fine


def test_an_import_whose_runner_stopped_is_settled_when_read(repo, source):
    store = repo.parts.imports
    job = repo.imports.start("main", [ImportSource.prefix(source.as_uri())])
    repo.imports.wait(job.id, timeout=30)
    old = datetime.now(UTC) - timedelta(minutes=5)
    dead = replace(
        job, id="dead" + job.id[4:], state=ImportState.RUNNING, heartbeat=old, updated=old
    )
    store.create(dead)  # what a process that died while ingesting leaves behind
    settled = repo.imports.status(dead.id)
    assert settled.state is ImportState.FAILED and "no sign of life" in (settled.error or "")
    landed = repo.imports.status(job.id)
    crashed = replace(
        dead,
        id="late" + job.id[4:],
        state=ImportState.COMMITTING,
        commit_id=landed.commit_id,
    )
    store.create(crashed)  # one that died after its commit landed
    settled = repo.imports.status(crashed.id)
    assert settled.completed and settled.commit_id == landed.commit_id
