"""Concurrency contracts of the SQL store: stage racing seal (threads on both backends, spawned
processes on PostgreSQL) and compare-and-swap races on update_branch."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from graveler.core.errors import BranchMoved, StorageError
from graveler.core.model import Branch
from graveler.storage.refs.sql import SqlMetadataStore
from graveler.storage.refs.store import MetadataStore
from tests.refs import race
from tests.refs.conftest import new_repository, opener

WRITERS = 4
ROUNDS = 40
BATCH = 25


def test_threads_staging_while_a_sealer_seals(store: MetadataStore) -> None:
    """N writer threads share one store (one engine, pooled connections) with a sealer."""
    new_repository(store)
    stop = threading.Event()
    log = race.SealLog()
    sealer = threading.Thread(target=race.seal_until, args=(store, stop, log))
    sealer.start()
    acks: list[race.Ack] = []
    try:
        # Under load the writers can finish before the sealer gets a turn: keep writing (new
        # writer ids, so new keys) until the race has really happened, at most 10 rounds.
        for attempt in range(10):
            with ThreadPoolExecutor(WRITERS) as pool:
                ids = range(attempt * WRITERS, (attempt + 1) * WRITERS)
                futures = [pool.submit(race.write_batches, store, n, ROUNDS, BATCH) for n in ids]
                acks += [ack for future in futures for ack in future.result()]
            if len(log.counts_at_seal) >= 3 and len({a.token for a in acks}) >= 2:
                break
    finally:
        stop.set()
        sealer.join()
    race.check_no_lost_writes(store, acks, log)


@pytest.mark.parametrize("kind", ["sqlite", "sqlite-stdlib", "mixed"])
def test_sqlite_writers_with_separate_engines(sqlite_db_url: str, kind: str) -> None:
    """Like separate processes: each writer opens its own store (engine) on the same file
    (``mixed``: the sealer on SQLAlchemy, the writers on the standard library's store)."""
    db_url = sqlite_db_url
    writers = "sqlite-stdlib" if kind == "mixed" else kind
    with opener("sqlite" if kind == "mixed" else kind)(db_url) as store:
        new_repository(store)
        stop = threading.Event()
        log = race.SealLog()
        sealer = threading.Thread(target=race.seal_until, args=(store, stop, log))
        sealer.start()
        acks: list[race.Ack] = []
        try:
            # As above: under load, keep writing until the race has really happened.
            for attempt in range(10):
                with ThreadPoolExecutor(WRITERS) as pool:
                    ids = range(attempt * WRITERS, (attempt + 1) * WRITERS)
                    futures = [
                        pool.submit(race.process_writer, db_url, n, ROUNDS, BATCH, writers)
                        for n in ids
                    ]
                    acks += [ack for future in futures for ack in future.result()]
                if len(log.counts_at_seal) >= 3 and len({a.token for a in acks}) >= 2:
                    break
        finally:
            stop.set()
            sealer.join()
        race.check_no_lost_writes(store, acks, log)


@pytest.mark.postgres
def test_processes_staging_while_a_sealer_seals_on_postgres(pg_db_url: str) -> None:
    """4 spawned processes stage on PostgreSQL while this process seals."""
    db_url = pg_db_url
    with SqlMetadataStore(db_url) as store:
        new_repository(store)
        stop = threading.Event()
        log = race.SealLog()
        sealer = threading.Thread(target=race.seal_until, args=(store, stop, log))
        context = multiprocessing.get_context("spawn")
        with context.Pool(WRITERS) as pool:
            pending = pool.starmap_async(
                race.process_writer, [(db_url, n, ROUNDS, BATCH) for n in range(WRITERS)]
            )
            sealer.start()
            try:
                results = pending.get(timeout=300)
            finally:
                stop.set()
                sealer.join()
        acks = [ack for result in results for ack in result]
        race.check_no_lost_writes(store, acks, log)


def _cas_race(store: MetadataStore, expected: Branch, commit_ids: list[str]) -> list[str]:
    """Run one update_branch per commit ID at the same moment; return each outcome."""
    barrier = threading.Barrier(len(commit_ids))

    def attempt(commit_id: str) -> str:
        barrier.wait()
        try:
            store.update_branch("repo", expected, replace(expected, commit_id=commit_id))
        except BranchMoved:
            return "moved"
        return commit_id

    with ThreadPoolExecutor(len(commit_ids)) as pool:
        return list(pool.map(attempt, commit_ids))


def test_concurrent_update_branch_from_the_same_expected(store: MetadataStore) -> None:
    """Two compare-and-swaps from the same expected row: exactly one wins, every time."""
    new_repository(store)
    for round_no in range(15):
        expected = store.get_branch("repo", "main")
        outcomes = _cas_race(store, expected, [f"c{round_no}-a", f"c{round_no}-b"])
        winners = [outcome for outcome in outcomes if outcome != "moved"]
        assert len(winners) == 1, outcomes
        assert store.get_branch("repo", "main").commit_id == winners[0]


@pytest.mark.parametrize("kind", ["sqlite", "sqlite-stdlib"])
def test_sqlite_writer_waits_for_the_lock_then_reports_storage_error(
    sqlite_db_url: str, kind: str
) -> None:
    """A writer queues behind another for ``busy_timeout``, then fails with a clear error."""
    with opener(kind)(sqlite_db_url, busy_timeout=0.3) as store:
        new_repository(store)
        holder = sqlite3.connect(sqlite_db_url.removeprefix("sqlite:///"), isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")
            with pytest.raises(StorageError, match="locked"):
                store.stage("repo", "main", [race.entry(b"k")])
            holder.execute("ROLLBACK")
            store.stage("repo", "main", [race.entry(b"k")])
        finally:
            holder.close()
        assert store.count_staged(store.get_branch("repo", "main").staging_token) == 1


def test_in_memory_sqlite_for_single_threaded_use() -> None:
    with SqlMetadataStore("sqlite://") as store:
        token = new_repository(store).staging_token
        store.stage("repo", "main", [race.entry(b"k")])
        assert [e.key for e in store.iter_staged(token)] == [b"k"]
