"""lakeFS's REST API on ``graveler serve`` (``/api/v1``), beside the same operations
in-process (:class:`graveler.repository.Repository` methods) and lakeFS 1.84's figures.

    python -m benchmarks lakefs_api

A repository of 1,000 committed objects (100 bytes each) and a branch with 10 changed
objects. Five operations, each the median of :data:`CALLS` calls after two warm-up calls:
stat of an object, a listing of all 1,000 objects (one page), the diff of the branch against
``main`` (10 changes), a commit of one staged object (the object is uploaded untimed before
each call), and an upload of 100 bytes. The API is called the way lakefs-sdk calls it: one
kept-alive HTTP connection (urllib3, lakefs-sdk's transport) with basic authentication, the
whole answer read. The server runs one worker over the same home as the in-process client.

lakeFS's figures (:data:`LAKEFS_1_84_MS`) are lakeFS 1.84 measured on the project's
machine with the same operations (local blockstore).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from benchmarks.lake import Context
from benchmarks.report import table
from benchmarks.s3load import Endpoint, graveler_endpoint
from graveler.client import Graveler
from graveler.repository import Repository

REPO = "lake"
OBJECTS = 1_000
CHANGES = 10
CALLS = 20
WARMUP = 2
BODY = bytes(range(100))
#: lakeFS 1.84 on the project's machine, milliseconds (median), same operations.
LAKEFS_1_84_MS = {
    "stat": 5.1,
    "list 1,000": 15.4,
    "diff of 10": 11.7,
    "commit (1 object)": 18.7,
    "upload 100 B": 11.9,
}


def run(ctx: Context) -> dict[str, Any]:
    home = ctx.fresh_dir("lakefs-api") / "home"
    with Graveler(home) as gv:
        repo = gv.create_repository(REPO, (home.parent / "ns").as_uri())
        _fill(repo)
        with graveler_endpoint(home, 1) as server:
            api = Api(server)
            timings = {
                "stat": _pair(api.stat, lambda i: repo.stat("main", _path(i))),
                "list 1,000": _pair(
                    lambda i: api.list_all(),
                    lambda i: repo.list("main", "", delimiter=None, amount=OBJECTS),
                ),
                "diff of 10": _pair(
                    lambda i: api.diff(), lambda i: list(repo.diff("main", "changes"))
                ),
                "commit (1 object)": _commits(api, repo),
                "upload 100 B": _pair(
                    lambda i: api.upload("uploads-api", f"up/{i}"),
                    lambda i: repo.put("uploads-local", f"up/{i}", BODY),
                ),
            }
            api.close()
    rows = []
    out: dict[str, Any] = {}
    for name, (api_s, local_s) in timings.items():
        api_ms, local_ms, lakefs_ms = api_s * 1e3, local_s * 1e3, LAKEFS_1_84_MS[name]
        rows.append(
            [name, api_ms, local_ms, api_ms / local_ms, lakefs_ms, f"{api_ms / lakefs_ms:.2f}x"]
        )
        out[name] = {"api_ms": api_ms, "in_process_ms": local_ms, "lakefs_1_84_ms": lakefs_ms}
    table(
        f"lakeFS API on graveler serve (1 worker), medians of {CALLS} calls, ms",
        ["operation", "API", "in-process", "API/in-process", "lakeFS 1.84", "graveler/lakeFS"],
        rows,
    )
    return out


class Api:
    """lakeFS's API over one kept-alive connection, as lakefs-sdk calls it."""

    def __init__(self, server: Endpoint) -> None:
        import urllib3

        host, port = server.url.removeprefix("http://").split(":")
        auth = f"{server.key_id}:{server.secret}"
        self.auth = urllib3.make_headers(basic_auth=auth)
        self.pool = urllib3.HTTPConnectionPool(host, int(port), maxsize=1)
        self.base = f"/api/v1/repositories/{REPO}"
        for branch in ("uploads-api", "commits-api"):
            self._call("POST", "/branches", {"name": branch, "source": "main"}, status=201)

    def _call(
        self,
        method: str,
        path: str,
        doc: dict[str, Any] | None = None,
        *,
        fields: dict[str, str] | None = None,
        body: bytes | None = None,
        status: int = 200,
    ) -> bytes:
        headers = dict(self.auth)
        if doc is not None:
            body = json.dumps(doc).encode()
            headers["Content-Type"] = "application/json"
        elif body is not None:
            headers["Content-Type"] = "application/octet-stream"
        url = self.base + path
        if fields:
            url += "?" + urlencode(fields)
        response = self.pool.urlopen(method, url, body=body, headers=headers)
        if response.status != status:
            raise RuntimeError(f"{method} {url}: {response.status} {response.data[:300]!r}")
        data: bytes = response.data
        return data

    def stat(self, i: int) -> bytes:
        return self._call("GET", "/refs/main/objects/stat", fields={"path": _path(i)})

    def list_all(self) -> bytes:
        found = self._call("GET", "/refs/main/objects/ls", fields={"amount": str(OBJECTS)})
        assert len(json.loads(found)["results"]) == OBJECTS
        return found

    def diff(self) -> bytes:
        found = self._call("GET", "/refs/main/diff/changes", fields={"amount": "1000"})
        assert len(json.loads(found)["results"]) == CHANGES
        return found

    def upload(self, branch: str, path: str) -> bytes:
        return self._call(
            "POST", f"/branches/{branch}/objects", body=BODY, fields={"path": path}, status=201
        )

    def commit(self, branch: str, message: str) -> bytes:
        return self._call("POST", f"/branches/{branch}/commits", {"message": message}, status=201)

    def close(self) -> None:
        self.pool.close()


def _path(i: int) -> str:
    return f"data/{i % OBJECTS:04d}.bin"


def _fill(repo: Repository) -> None:
    for i in range(OBJECTS):
        repo.put("main", _path(i), BODY)
    repo.commit("main", "1,000 objects")
    for branch in ("changes", "uploads-local", "commits-local"):
        repo.create_branch(branch, "main")
    for i in range(CHANGES):
        repo.put("changes", _path(i * 97), BODY[::-1])
    repo.commit("changes", "10 changes")


def _median(fn: Callable[[int], Any], setup: Callable[[int], Any] | None = None) -> float:
    for i in range(WARMUP):
        if setup is not None:
            setup(10_000 + i)
        fn(10_000 + i)
    times = []
    for i in range(CALLS):
        if setup is not None:
            setup(i)
        t0 = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _pair(api: Callable[[int], Any], local: Callable[[int], Any]) -> tuple[float, float]:
    """Median seconds through the API, then in-process."""
    return _median(api), _median(local)


def _commits(api: Api, repo: Repository) -> tuple[float, float]:
    through_api = _median(
        lambda i: api.commit("commits-api", f"commit {i}"),
        setup=lambda i: api.upload("commits-api", f"c/{i}"),
    )
    local = _median(
        lambda i: repo.commit("commits-local", f"commit {i}"),
        setup=lambda i: repo.put("commits-local", f"c/{i}", BODY),
    )
    return through_api, local
