"""Concurrent writers and committers on one branch lose no acknowledged write and produce a
linear history: 4 threads on SQLite, 4 processes on PostgreSQL."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import threading

import pytest

from graveler.client import Graveler
from graveler.core.errors import NoChanges

WRITES = 25


def worker(home: str, url: str, ns: str, wid: int) -> list[str]:
    """Put WRITES objects, committing after every few; returns acknowledged paths."""
    acked: list[str] = []
    with Graveler(home=home, database_url=url) as gv:
        repo = gv.repository("lake")
        for i in range(WRITES):
            path = f"w{wid}/obj-{i:03d}"
            repo.put("main", path, f"{wid}:{i}".encode())
            acked.append(path)
            if i % 5 == 4:
                # NoChanges: another committer took our writes into its commit
                with contextlib.suppress(NoChanges):
                    repo.commit("main", f"worker {wid} batch {i // 5}")
    return acked


def check(gv: Graveler, acked: list[str]) -> None:
    repo = gv.repository("lake")
    with contextlib.suppress(NoChanges):
        repo.commit("main", "final")
    head = repo.resolve("main").commit
    present = {e.path for e in repo.iter_objects(head.id)}
    assert set(acked) <= present, f"lost writes: {sorted(set(acked) - present)[:5]}"
    history = list(repo.log("main"))
    assert all(len(c.parents) <= 1 for c in history), "history must be linear"
    assert history[-1].message == "Repository created"
    assert len({c.id for c in history}) == len(history)
    assert list(repo.diff_uncommitted("main")) == []


def test_threads_on_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'refs.db'}"
    home = str(tmp_path / "home")
    with Graveler(home=home, database_url=url) as gv:
        gv.create_repository("lake", (tmp_path / "ns").as_uri())
    results: list[list[str]] = [[] for _ in range(4)]
    errors: list[BaseException] = []

    def run(wid: int) -> None:
        try:
            results[wid] = worker(home, url, "", wid)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    with Graveler(home=home, database_url=url) as gv:
        check(gv, [p for r in results for p in r])


@pytest.mark.postgres
def test_processes_on_postgres(tmp_path, pg_schema_url):
    home = str(tmp_path / "home")
    with Graveler(home=home, database_url=pg_schema_url) as gv:
        gv.create_repository("lake", (tmp_path / "ns").as_uri())
    ctx = mp.get_context("spawn")
    with ctx.Pool(4) as pool:
        results = pool.starmap(
            worker, [(os.path.join(home, f"p{w}"), pg_schema_url, "", w) for w in range(4)]
        )
    with Graveler(home=home, database_url=pg_schema_url) as gv:
        check(gv, [p for r in results for p in r])


def test_put_racing_a_commit_is_committed_or_still_staged(tmp_path):
    """Writes made while commits run land in a commit or stay staged; none vanish."""
    url = f"sqlite:///{tmp_path / 'refs.db'}"
    with Graveler(home=tmp_path / "h", database_url=url) as gv:
        repo = gv.create_repository("lake", (tmp_path / "ns").as_uri())
        stop = threading.Event()
        acked: list[str] = []

        def writer() -> None:
            i = 0
            while not stop.is_set() and i < 300:
                repo.put("main", f"race/{i:04d}", b"x")
                acked.append(f"race/{i:04d}")
                i += 1

        t = threading.Thread(target=writer)
        t.start()
        commits = 0
        while t.is_alive() and commits < 30:
            try:
                repo.commit("main", f"c{commits}")
                commits += 1
            except NoChanges:
                pass
        stop.set()
        t.join()
        committed = {e.path for e in repo.iter_objects(repo.resolve("main").commit.id)}
        staged = {d.path for d in repo.diff_uncommitted("main")}
        assert set(acked) == committed | staged
        assert not committed & staged
        assert commits >= 2
