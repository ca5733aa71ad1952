"""Suite ``hotpaths``: the calls users make most, against their own reference in the same run.

* Reads on the lake of the run's scale: ``stat``, ``exists`` and ``get`` by branch name (clean,
  and with staged changes) against the same call by commit ID; ``stat`` by commit ID against
  the engine's own ``CommittedManager.get``; ``stat_many`` per key against a single ``stat``;
  a ``list`` page by branch against the same page by commit ID.
* Single puts of 100 bytes against the put of commit a84461e (re-enacted by
  :func:`legacy_put`: a separate branch read, ``ObjectStore.put`` with temp file, fsync,
  rename and directory fsync, and a staging transaction with ``synchronous=FULL``).
* CLI start-up: ``graveler repo list`` against ``python -c "import json"``, both run by this
  interpreter as whole processes.

Timings interleave the variants and keep each one's best of several rounds, so a burst of
load on a shared machine hits every variant alike; ratios are what to read.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from benchmarks.lake import Context, Lake, lake_path
from benchmarks.report import table
from graveler.repository import Repository
from graveler.storage.entry import ObjectEntry
from graveler.storage.objects import HashingReader, new_physical_address
from graveler.storage.refs.sql import SqlMetadataStore
from graveler.versioning.writes import guess_type

ROUNDS = 7
STAGED = 100  # staged changes on the "staged" branch
REAL_OBJECTS = 1_000  # objects with bytes, for get()


def best_of(
    cases: dict[str, tuple[Callable[[], Any], int]],
    rounds: int = ROUNDS,
    cpu: dict[str, float] | None = None,
) -> dict[str, float]:
    """Seconds per operation of each case: the best round, rounds interleaved. When ``cpu``
    is given it receives the same for the process's CPU time (what a busy machine disturbs
    least, for work that does not wait on I/O)."""
    best = {name: float("inf") for name in cases}
    for _ in range(rounds):
        for name, (fn, ops) in cases.items():
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            t1, c1 = time.perf_counter(), time.process_time()
            best[name] = min(best[name], (t1 - t0) / ops)
            if cpu is not None:
                cpu[name] = min(cpu.get(name, float("inf")), (c1 - c0) / ops)
    return best


def _loop(call: Callable[[str, str], Any], ref: str, paths: list[str]) -> Callable[[], None]:
    def run() -> None:
        for p in paths:
            call(ref, p)

    return run


def prepare(repo: Repository, lake: Lake) -> tuple[str, list[str]]:
    """Branches ``clean`` and ``staged`` at the lake's commit, objects with bytes under
    ``real/`` committed on both; returns (commit ID, the real paths)."""
    repo.create_branch("bench-base", lake.commit_id)
    real = [f"real/{i:05d}" for i in range(REAL_OBJECTS)]
    repo.upload_many("bench-base", [(p, f"{p}\n".encode()) for p in real])
    commit = repo.commit("bench-base", "objects with bytes").id
    repo.create_branch("clean", commit)
    repo.create_branch("staged", commit)
    repo.upload_many("staged", [(f"other/{i:04d}", b"staged") for i in range(STAGED)])
    return commit, real


def measure_reads(
    repo: Repository, lake: Lake, count: int, cpu: dict[str, float] | None = None
) -> dict[str, float]:
    commit, real = prepare(repo, lake)
    rng = random.Random(11)
    paths = [lake_path(rng.randrange(lake.n)) for _ in range(count)]
    keys = [p.encode() for p in paths]
    mid = repo.resolve(commit).commit.metarange_id
    get_paths = [real[rng.randrange(len(real))] for _ in range(min(count, 2_000))]
    page = lake_path(lake.n // 2)[:20]
    cases: dict[str, tuple[Callable[[], Any], int]] = {
        "engine_get": (lambda: [repo.committed.get(mid, k) for k in keys], len(keys)),
        "stat_many": (lambda: repo.stat_many(commit, paths), len(paths)),
    }
    for call in ("stat", "exists", "get"):
        sample = get_paths if call == "get" else paths
        for label, ref in (("commit", commit), ("branch", "clean"), ("staged", "staged")):
            cases[f"{call}_{label}"] = (_loop(getattr(repo, call), ref, sample), len(sample))
    for label, ref in (("commit", commit), ("branch", "clean"), ("staged", "staged")):
        cases[f"list_{label}"] = (lambda r=ref: repo.list(r, page, delimiter=None), 1)
    return best_of(cases, cpu=cpu)


def legacy_put(
    repo: Repository, store: SqlMetadataStore, branch: str, path: str, data: bytes | BinaryIO
) -> ObjectEntry:
    """``Repository.put`` as it was at commit a84461e (the reference for the put ratio), its
    refs and staging on SQLAlchemy (``store``: the same database as ``repo``'s)."""
    with _as_at_a84461e(store):
        if store.get_branch(repo.name, branch).protected:
            raise AssertionError("the benchmark branch is not protected")
        address = new_physical_address()
        reader = HashingReader(data)
        info = repo.store.put(address, reader)  # type: ignore[arg-type]
        entry = ObjectEntry(
            path, address, reader.size, reader.hexdigest(), info.mtime, guess_type(path), {}
        )
        store.stage(repo.name, branch, [entry.to_staged()])
    return entry


@contextmanager
def _as_at_a84461e(store: SqlMetadataStore) -> Any:
    """The database as a84461e used it: every statement through SQLAlchemy (no direct SQLite
    connection, which came later) and staging committed with ``synchronous=FULL``, as every
    write was before staging was relaxed."""
    db = store._db
    relaxed = db._relaxed
    db._relaxed = db._writer
    db.direct_connection = lambda: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        db._relaxed = relaxed
        del db.direct_connection


def measure_puts(repo: Repository, database_url: str, puts: int) -> dict[str, float]:
    repo.create_branch("puts", repo.info.default_branch)
    counter = iter(range(10**9))

    def batch(put: Callable[..., Any]) -> Callable[[], None]:
        return lambda: [
            put(repo, "puts", f"p/{next(counter):08d}", b"x" * 100) for _ in range(puts)
        ]

    from graveler.versioning.writes import put

    with SqlMetadataStore(database_url) as store:
        legacy = partial(legacy_put_with, store)
        cases = {"put": (batch(put), puts), "legacy_put": (batch(legacy), puts)}
        return best_of(cases, rounds=5)


def legacy_put_with(
    store: SqlMetadataStore, repo: Repository, branch: str, path: str, data: bytes
) -> ObjectEntry:
    return legacy_put(repo, store, branch, path, data)


def measure_cli(lake: Lake, rounds: int = 15) -> dict[str, float]:
    exe = Path(sys.executable)
    env = {
        **os.environ,
        "GRAVELER_HOME": str(lake.home),
        "GRAVELER_DATABASE_URL": lake.database_url,
        "COLUMNS": "400",
    }
    commands = {
        "python_import_json": [str(exe), "-c", "import json"],
        "repo_list": [str(exe.parent / "graveler"), "repo", "list"],
    }

    def spawn(cmd: list[str]) -> Callable[[], None]:
        return lambda: subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)

    return best_of({k: (spawn(v), 1) for k, v in commands.items()}, rounds=rounds)


def run(ctx: Context) -> dict[str, Any]:
    lake = ctx.lake(ctx.n)
    count = min(50_000, max(5_000, ctx.n // 10))
    with lake.client(ctx.fresh_dir("hotpaths")) as gv:
        repo = gv.repository("lake")
        reads_cpu: dict[str, float] = {}
        reads = measure_reads(repo, lake, count, reads_cpu)
        puts = measure_puts(repo, lake.database_url, 200)
    cli = measure_cli(lake)
    out = {
        "n": ctx.n,
        "paths": count,
        "reads": reads,
        "reads_cpu": reads_cpu,
        "puts": puts,
        "cli": cli,
    }
    _print(out)
    return out


def _print(r: dict[str, Any]) -> None:
    reads, us = r["reads"], 1e6
    rows = [
        (
            call,
            reads[f"{call}_commit"] * us,
            reads[f"{call}_branch"] * us,
            reads[f"{call}_staged"] * us,
        )
        for call in ("stat", "exists", "get", "list")
    ]
    table(
        f"hot paths: reads on a lake of {r['n']:,} objects, microseconds per call "
        f"(list: one page of 1,000)",
        ["call", "by commit ID", "by branch", "by branch, staged changes"],
        rows,
    )
    print(
        f"  engine CommittedManager.get {reads['engine_get'] * us:.2f} us; "
        f"stat_many {reads['stat_many'] * us:.2f} us per key"
    )
    puts, cli = r["puts"], r["cli"]
    print(
        f"  put 100 B: {1 / puts['put']:,.0f}/s (a84461e: {1 / puts['legacy_put']:,.0f}/s); "
        f"graveler repo list {cli['repo_list'] * 1000:.0f} ms, "
        f"python -c 'import json' {cli['python_import_json'] * 1000:.0f} ms"
    )
