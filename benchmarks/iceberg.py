"""The ``iceberg`` suite: the REST catalog of ``graveler serve`` beside pyiceberg's own
``SqlCatalog`` (SQLite, local files) on the same machine, and the logical merge.

* **Latency** (median of the rounds): loading a table, a metadata-only commit (a property
  set: the catalog's own cost) and a one-row append (the client writes a Parquet file, a
  manifest and a manifest list, then commits), through graveler's REST catalog (one worker),
  through graveler's in-process pyiceberg catalog, and through SqlCatalog;
* **Merge**: a run branch appends 10 snapshots while ``main`` appends one, then graveler
  merges the branch (the 10 snapshots replayed on main's): on tables of 100 and of 10,000
  snapshots (:mod:`benchmarks.iceberg_history`), alternating between the two round by
  round; the target is at most 1.5x between them. Before each timed merge the files the
  harness wrote itself (the branch's table files and metadata, written directly and not
  flushed, as no graveler path writes a metadata file) are flushed to the disk with
  ``os.sync``, so that the first fsync of the merge does not wait for them: on this machine's
  ext4 it did, and at 10,000 snapshots that is two 4.8 MB metadata files.
  Beside it, Iceberg's own cost of one commit on the same tables: a metadata-only commit
  through pyiceberg's SqlCatalog with the table registered there (every Iceberg commit
  rewrites the whole metadata file, which holds the table's history); and the floor under
  any merge of that table: writing its metadata file once, durably, to the repository's
  object store as the merge writes it (``open_writer`` + ``commit``).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog

from benchmarks import iceberg_history
from benchmarks.lake import Context
from benchmarks.report import table
from benchmarks.s3load import graveler_endpoint
from graveler import Graveler
from graveler.tables.iceberg import GravelerCatalog

ROUNDS = 30
MERGE_ROUNDS = 11
HISTORIES = (100, 10_000)
ROW = pa.table({"id": pa.array([1], pa.int64()), "v": pa.array(["x"])})


def run(ctx: Context) -> dict[str, Any]:
    out: dict[str, Any] = {"latency": latency(ctx), "merge": merges(ctx)}
    merge, own = out["merge"]["merge"], out["merge"]["iceberg commit"]
    floor = out["merge"]["metadata write"]
    ratio = merge[HISTORIES[-1]] / merge[HISTORIES[0]]
    out["merge_ratio"] = ratio
    rows = [
        [f"{n:,} snapshots", *(f"{col[n] * 1000:.1f} ms" for col in (merge, own, floor))]
        for n in HISTORIES
    ]
    ratios = (f"{col[HISTORIES[-1]] / col[HISTORIES[0]]:.2f}" for col in (merge, own, floor))
    rows.append(["ratio (target <= 1.5)", *ratios])
    headers = [
        "table",
        "graveler merge",
        "Iceberg's own commit (SqlCatalog)",
        "writing its metadata file once",
    ]
    table("logical merge of 10 snapshots", headers, rows)
    return out


def latency(ctx: Context) -> dict[str, dict[str, float]]:
    home = ctx.fresh_dir("iceberg") / "home"
    results: dict[str, dict[str, float]] = {}
    with graveler_endpoint(home, 1) as gv:
        rest = RestCatalog(
            "rest",
            uri=gv.url + "/iceberg/api",
            warehouse="lake",
            credential=f"{gv.key_id}:{gv.secret}",
            **{"oauth2-server-uri": gv.url + "/iceberg/api/v1/oauth/tokens"},
        )
        results["graveler REST"] = _latencies(rest, "main.bench", "main.bench.t")
    with Graveler(home=home) as client:
        inproc = GravelerCatalog("inproc", client.repository("lake"))
        results["graveler in-process"] = _latencies(inproc, "main.bench2", "main.bench2.t")
    peer_dir = ctx.fresh_dir("iceberg-sql")
    sql = SqlCatalog("sql", uri=f"sqlite:///{peer_dir / 'catalog.db'}", warehouse=peer_dir.as_uri())
    results["pyiceberg SqlCatalog"] = _latencies(sql, "bench", "bench.t")
    rows = [
        [name, *(f"{r[k] * 1000:.1f} ms" for k in ("load", "commit", "append"))]
        for name, r in results.items()
    ]
    table("Iceberg catalog latency (median)", ["catalog", "load table", "commit", "append"], rows)
    return results


def _latencies(catalog: Catalog, namespace: str, ident: str) -> dict[str, float]:
    catalog.create_namespace(namespace)
    created = catalog.create_table(ident, ROW.schema)
    for _ in range(5):  # a table with a little history
        created.append(ROW)
    load = _median(lambda: catalog.load_table(ident))
    tbl = catalog.load_table(ident)
    counter = iter(range(10**9))

    def commit() -> None:
        with tbl.transaction() as tx:
            tx.set_properties({"bench": str(next(counter))})

    return {"load": load, "commit": _median(commit), "append": _median(lambda: tbl.append(ROW))}


def _median(call: Callable[[], Any], rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def merges(ctx: Context) -> dict[str, dict[int, float]]:
    """Each table is built and timed on its own, then the merges alternate between the
    tables round by round, so that both sizes are timed through the same stretch of the
    machine's load."""
    own: dict[int, float] = {}
    floor: dict[int, float] = {}
    times: dict[int, list[float]] = {n: [] for n in HISTORIES}
    with contextlib.ExitStack() as stack:
        tables = {n: _history_table(ctx, stack, n) for n in HISTORIES}
        for n, (catalog, repo) in tables.items():
            own[n] = _own_commit(ctx, catalog, n)
            floor[n] = _metadata_write(catalog, repo)
        for r in range(MERGE_ROUNDS):
            for n, (catalog, repo) in tables.items():
                times[n].append(_merge_once(catalog, repo, r))
    found = {n: statistics.median(took) for n, took in times.items()}
    return {"merge": found, "iceberg commit": own, "metadata write": floor}


def _history_table(
    ctx: Context, stack: contextlib.ExitStack, n: int
) -> tuple[GravelerCatalog, Any]:
    """A repository (in a client ``stack`` closes) whose ``main`` has table ``bench.t`` with
    ``n`` snapshots."""
    home = ctx.fresh_dir(f"iceberg-merge-{n}")
    client = stack.enter_context(Graveler(home=home / "home"))
    repo = client.create_repository("lake", (home / "ns").as_uri())
    catalog = GravelerCatalog("bench", repo)
    catalog.create_namespace(("main", "bench"))
    started = time.perf_counter()
    iceberg_history.build(catalog, "main.bench.t", n)
    print(f"  [iceberg] {n:,} snapshots written in {time.perf_counter() - started:.0f} s")
    return catalog, repo


def _metadata_write(catalog: GravelerCatalog, repo: Any) -> float:
    """Median time of writing the table's current metadata file to a new object of the
    repository's store, durably, as a merge writes the merged one (the objects are removed
    after)."""
    location = catalog.load_table("main.bench.t").metadata_location
    data = Path(unquote(urlsplit(location).path)).read_bytes()
    keys = [f"data/bench-floor/{uuid.uuid4()}" for _ in range(MERGE_ROUNDS * 2 + 1)]

    def write(key: str) -> float:
        started = time.perf_counter()
        with repo.store.open_writer(key, fresh=True) as writer:
            writer.write(data)
        writer.commit()
        return time.perf_counter() - started

    try:
        return statistics.median(write(key) for key in keys)
    finally:
        for key in keys:
            repo.store.delete(key)


def _own_commit(ctx: Context, catalog: GravelerCatalog, n: int) -> float:
    """Median time of a metadata-only commit through SqlCatalog on the table's metadata
    (registered there: the same history, Iceberg's own commit path)."""
    peer = ctx.fresh_dir(f"iceberg-own-{n}")
    sql = SqlCatalog("own", uri=f"sqlite:///{peer / 'catalog.db'}", warehouse=peer.as_uri())
    sql.create_namespace("own")
    location = catalog.load_table("main.bench.t").metadata_location
    tbl = sql.register_table("own.t", location)
    counter = iter(range(10**9))

    def commit() -> None:
        with tbl.transaction() as tx:
            tx.set_properties({"bench": str(next(counter))})

    return _median(commit, MERGE_ROUNDS * 2 + 1)


def _merge_once(catalog: GravelerCatalog, repo: Any, round_no: int) -> float:
    branch = f"run-{round_no}"
    repo.create_branch(branch, "main")
    iceberg_history.extend(catalog, f"{branch}.bench.t", 10)
    iceberg_history.extend(catalog, "main.bench.t", 1)
    os.sync()  # the harness's own unflushed writes (see the module docstring)
    started = time.perf_counter()
    repo.merge(branch, "main")
    took = time.perf_counter() - started
    repo.delete_branch(branch)
    return took
