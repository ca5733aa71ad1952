"""Suite ``ui``: the web UI's pages on a big repository, served in-process.

For each size N (default 1,000,000; ``--sizes 100k`` for a quick run) the suite imports N
lake files into ``main`` (:func:`benchmarks.lake.build_lake`, metadata only, as every engine
suite does), commits 10 changes on a branch ``changes`` (4 objects rewritten, 3 added,
3 deleted, spread over the lake), and times GET requests to the app of ``graveler ui``
(:func:`graveler.server.ui.create_app`, read-only) through Starlette's test client: routing, the
engine's reads and the templates, no network and no browser.

* ``compare``: the compare page ``main...changes``; the target is < 200 ms at 1M
  (the web UI issue);
* ``compare summary``: the counts fragment the compare page polls when its first page does
  not hold every change (here it does; timed for completeness);
* ``browser``: the first page of the object browser at the root, in one hour's folder
  (500 objects) and in one month's folder (its days as folders);
* ``commit``: the page of the commit with the 10 changes, and that of the import commit
  (a first page of its N additions).

Each page gets a fresh client and app, which first serve the home page (the list of
repositories: no tree is read, but the first request's set-up is paid). Then come one cold
request of the page (an empty tree cache in memory; the tree files on local disk, likely in
the OS page cache), a warm-up and ``ROUNDS`` warm requests, of which the median is the figure
and the target's measure: a running ``graveler ui`` keeps the trees it read in memory.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from benchmarks.lake import FILES_PER_HOUR, Lake, build_lake, lake_path
from benchmarks.report import table
from graveler.repository import Repository
from graveler.server.ui.links import Links

ROUNDS = 9
WARMUP = 2
TARGET_MS = 200.0
CHANGES = 10


def changed_paths(n: int) -> tuple[list[str], list[str], list[str]]:
    """(rewritten, deleted, added) paths: :data:`CHANGES` in all, spread over the N objects."""
    spread = [lake_path(n * k // 8) for k in range(1, 8)]
    return spread[:4], spread[4:], [lake_path(k, tag="added") for k in range(3)]


def make_changes(repo: Repository, n: int) -> str:
    """Branch ``changes`` off main with the :func:`changed_paths` committed; returns the
    commit ID."""
    repo.create_branch("changes", "main")
    rewritten, deleted, added = changed_paths(n)
    for path in rewritten + added:
        repo.put("changes", path, f"{path}\n".encode())
    for path in deleted:
        repo.delete("changes", path)
    return repo.commit("changes", f"{CHANGES} changes").id


def pages(lake: Lake, change_id: str) -> dict[str, str]:
    """The pages to time: name -> path and query (built by the UI's own :class:`Links`)."""
    links = Links()
    hour, month = lake_path(0).rsplit("/", 1)[0] + "/", lake_path(0)[: len("input/2020/01/")]
    return {
        "compare main...changes": links.compare("lake", "main", "changes"),
        "compare summary fragment": links.compare_summary("lake", "main", "changes"),
        "browser: root": links.tree("lake", "main"),
        f"browser: an hour ({FILES_PER_HOUR} objects)": links.tree("lake", "main", hour),
        "browser: a month (its days)": links.tree("lake", "main", month),
        f"commit: {CHANGES} changes": links.commit("lake", change_id),
        f"commit: the import ({lake.n:,} additions)": links.commit("lake", lake.commit_id),
    }


def _client(lake: Lake) -> Any:
    """A fresh read-only app over the lake, with its Graveler client (to close)."""
    from fastapi.testclient import TestClient

    from graveler.server.ui import create_app

    gv = lake.client()
    return TestClient(create_app(gv)), gv


def _get_ms(http: Any, url: str) -> float:
    t0 = time.perf_counter()
    response = http.get(url)
    elapsed = (time.perf_counter() - t0) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"GET {url}: {response.status_code}\n{response.text[:500]}")
    return elapsed


def check_compare(lake: Lake, url: str) -> None:
    """The compare page lists every change (so the timings are of a page doing its job)."""
    http, gv = _client(lake)
    try:
        body = http.get(url).text
    finally:
        gv.close()
    missing = [p for group in changed_paths(lake.n) for p in group if p not in body]
    if missing:
        raise RuntimeError(f"the compare page does not list {missing}")


def time_pages(lake: Lake, urls: dict[str, str]) -> dict[str, dict[str, float]]:
    """Per page: the cold request (fresh app and client) and the warm median, in ms."""
    out: dict[str, dict[str, float]] = {}
    for name, url in urls.items():
        http, gv = _client(lake)
        try:
            _get_ms(http, Links().home())  # the app's first request: no trees read
            cold = _get_ms(http, url)
            for _ in range(WARMUP):
                _get_ms(http, url)
            warm = [_get_ms(http, url) for _ in range(ROUNDS)]
        finally:
            gv.close()
        out[name] = {"cold_ms": cold, "median_ms": statistics.median(warm), "min_ms": min(warm)}
    return out


def run_size(n: int, workdir: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    lake = build_lake(n, workdir)
    with lake.client() as gv:
        change_id = make_changes(gv.repository("lake"), n)
    built = time.perf_counter() - t0
    print(f"  [ui] built {n:,} objects + {CHANGES} changes in {built:.1f} s", flush=True)
    urls = pages(lake, change_id)
    check_compare(lake, urls["compare main...changes"])
    result = time_pages(lake, urls)
    rows = [
        [name, f"{r['cold_ms']:.1f}", f"{r['median_ms']:.1f}", f"{r['min_ms']:.1f}"]
        for name, r in result.items()
    ]
    table(f"ui pages, N = {n:,}", ["page", "cold ms", "median ms", "min ms"], rows)
    compare = result["compare main...changes"]["median_ms"]
    verdict = "met" if compare < TARGET_MS else "MISSED"
    print(
        f"  compare page, {n:,} objects, {CHANGES} changes: {compare:.1f} ms median "
        f"(target < {TARGET_MS:.0f} ms: {verdict})",
        flush=True,
    )
    return {"n": n, "build_seconds": built, "pages": result, "target_ms": TARGET_MS}


def run(sizes: list[int]) -> list[dict[str, Any]]:
    """The suite over each size (each in its own temporary directory)."""
    results = []
    for n in sizes:
        print(f"\n  --- ui pages, N = {n:,} ---", flush=True)
        with TemporaryDirectory(prefix="graveler-bench-ui-") as tmp:
            results.append(run_size(n, Path(tmp)))
    return results
