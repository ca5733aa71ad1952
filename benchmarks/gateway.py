"""The S3 gateway suite: ``graveler serve`` against the object store it writes to, and the
same calls against a moto server, in one run.

* 64 MiB objects: PUT and GET throughput through the gateway (one worker) beside the same
  bytes written to and read from the repository's object store directly
  (``LocalObjectStore.put`` / ``get``, flushed as the gateway flushes); targets GET >= 0.7x
  and PUT >= 0.5x of direct;
* 4 KiB objects: PUTs and GETs per second (targets 400 and 1,500 per worker), with one and
  two workers;
* a LIST of 10,000 keys (ten pages of 1,000);
* the cost of ``--verify-reads`` (the server hashes every streamed GET): 64 MiB GETs from a
  server started with it, beside direct reads.

Each figure is the median of its rounds. See :mod:`benchmarks.s3load` for the clients: boto3,
presigned requests over kept-alive ``http.client`` connections, and curl on presigned URLs
for the 64 MiB objects (Python's own reading caps a 64 MiB download near 1.3 GB/s on the
project's machine, whatever the server: curl shows the server's figure). The curl rows are
left out when curl is not installed.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from functools import partial
from typing import Any

from benchmarks.lake import Context
from benchmarks.report import table
from benchmarks.s3load import (
    Endpoint,
    graveler_endpoint,
    lean_load,
    moto_endpoint,
    rate,
    seconds,
)
from graveler.storage.objectstore.local import LocalObjectStore

BIG = 64 << 20
SMALL = 4 << 10
SMALL_KEYS = 10_000
GETS = 4_000
THREADS = 4
ROUNDS = 3
BIG_ROUNDS = 5
CURL = shutil.which("curl")


def run(ctx: Context) -> dict[str, Any]:
    home = ctx.fresh_dir("gateway") / "home"
    out: dict[str, Any] = {}
    with graveler_endpoint(home, 1) as gv, moto_endpoint() as moto:
        store = LocalObjectStore(str(home / "ns"))
        ours = big_objects(gv, store)
        direct_ = {"PUT": ours.pop("direct PUT"), "GET": ours.pop("direct GET")}
        out["big"] = {gv.name: ours, "moto": big_objects(moto), "direct": direct_}
        out["small"] = {gv.name: small_objects(gv, "w1"), "moto": small_objects(moto, "w1")}
        out["list"] = {gv.name: list_all(gv, "w1/"), "moto": list_all(moto, "w1/")}
    with graveler_endpoint(home, 2) as gv2:
        out["small"][gv2.name] = small_objects(gv2, "w2")
    with graveler_endpoint(home, 1, "--verify-reads") as verifying:
        out["verified"] = verified_gets(verifying, LocalObjectStore(str(home / "ns")))
    _print(out)
    return out


def big_objects(endpoint: Endpoint, store: LocalObjectStore | None = None) -> dict[str, float]:
    """MB/s of each client's PUT and GET (median of :data:`BIG_ROUNDS`); with ``store``, the
    same bytes written to and read from it directly in each round, right after the
    endpoint's calls (rows "direct PUT" and "direct GET"), so both see the same machine."""
    data = os.urandom(BIG)
    client = endpoint.boto()
    rows: dict[str, list[float]] = {
        "lean PUT": [],
        "lean GET": [],
        "boto3 PUT": [],
        "boto3 GET": [],
    }
    for n in range(BIG_ROUNDS):
        key, other = f"main/big/{n}", f"main/big/boto-{n}"
        put = endpoint.presigned(client, "PUT", [key])
        rows["lean PUT"].append(_mbps(partial(lean_load, endpoint, "PUT", put, data, 1)))
        get = endpoint.presigned(client, "GET", [key])
        rows["lean GET"].append(_mbps(partial(lean_load, endpoint, "GET", get, b"", 1)))
        rows["boto3 PUT"].append(
            _mbps(partial(client.put_object, Bucket=endpoint.bucket, Key=other, Body=data))
        )
        rows["boto3 GET"].append(_mbps(partial(_boto_get, client, endpoint.bucket, other)))
        if CURL:
            rows.setdefault("curl PUT", []).append(_curl_put(endpoint, client, data, n))
            rows.setdefault("curl GET", []).append(_curl_get(endpoint, client, key))
        if store is not None:
            rows.setdefault("direct PUT", []).append(_mbps(partial(store.put, f"d/{n}", data)))
            rows.setdefault("direct GET", []).append(_mbps(partial(store.get, f"d/{n}")))
    # Kept until now, as the endpoint keeps its objects: rewriting the blocks just freed is
    # faster on this machine's disk than writing new ones, which would flatter direct.
    if store is not None:
        for n in range(BIG_ROUNDS):
            store.delete(f"d/{n}")
    return {name: statistics.median(values) for name, values in rows.items()}


def verified_gets(endpoint: Endpoint, store: LocalObjectStore) -> dict[str, float]:
    """MB/s of 64 MiB GETs (lean client, and curl when installed) from ``endpoint`` and of
    direct reads of the same bytes, each round's object written just before (median of
    :data:`BIG_ROUNDS`)."""
    data = os.urandom(BIG)
    client = endpoint.boto()
    rows: dict[str, list[float]] = {"lean GET": [], "direct GET": []}
    for n in range(BIG_ROUNDS):
        key = f"main/verified/{n}"
        client.put_object(Bucket=endpoint.bucket, Key=key, Body=data)
        get = endpoint.presigned(client, "GET", [key])
        rows["lean GET"].append(_mbps(partial(lean_load, endpoint, "GET", get, b"", 1)))
        if CURL:
            rows.setdefault("curl GET", []).append(_curl_get(endpoint, client, key))
        store.put(f"v/{n}", data)
        rows["direct GET"].append(_mbps(partial(store.get, f"v/{n}")))
    for n in range(BIG_ROUNDS):
        store.delete(f"v/{n}")
    return {name: statistics.median(values) for name, values in rows.items()}


def _curl_put(endpoint: Endpoint, client: Any, data: bytes, n: int) -> float:
    """MB/s of curl uploading ``data`` (from a file in the page cache) to a presigned PUT."""
    (target,) = endpoint.presigned(client, "PUT", [f"main/big/curl-{n}"])
    with tempfile.NamedTemporaryFile() as source:
        source.write(data)
        source.flush()
        return _mbps(partial(_curl, ["-T", source.name, endpoint.url + target]))


def _curl_get(endpoint: Endpoint, client: Any, key: str) -> float:
    """MB/s of curl downloading ``key`` from a presigned GET (the bytes go to /dev/null)."""
    (target,) = endpoint.presigned(client, "GET", [key])
    return _mbps(partial(_curl, ["-o", "/dev/null", endpoint.url + target]))


def _curl(args: list[str]) -> None:
    assert CURL is not None  # the curl rows exist only when it does
    subprocess.run([CURL, "-s", "-f", "-H", "Expect:", *args], check=True)


def _boto_get(client: Any, bucket: str, key: str) -> bytes:
    return bytes(client.get_object(Bucket=bucket, Key=key)["Body"].read())


def _mbps(call: Callable[[], Any]) -> float:
    return BIG / 1e6 / seconds(call)


def small_objects(endpoint: Endpoint, prefix: str) -> dict[str, float]:
    client = endpoint.boto()
    body = os.urandom(SMALL)
    keys = [f"main/{prefix}/{i:05d}" for i in range(SMALL_KEYS)]
    puts = endpoint.presigned(client, "PUT", keys)
    gets = endpoint.presigned(client, "GET", [keys[(i * 7919) % SMALL_KEYS] for i in range(GETS)])
    put_rate = lean_load(endpoint, "PUT", puts, body, THREADS)
    get_rate = lean_load(endpoint, "GET", gets, b"", THREADS)
    boto_put = rate(
        300,
        lambda i: client.put_object(Bucket=endpoint.bucket, Key=f"main/{prefix}-b/{i}", Body=body),
    )
    boto_get = rate(
        600, lambda i: client.get_object(Bucket=endpoint.bucket, Key=keys[i])["Body"].read()
    )
    return {
        "lean PUT/s": put_rate,
        "lean GET/s": get_rate,
        "boto3 PUT/s": boto_put,
        "boto3 GET/s": boto_get,
    }


def list_all(endpoint: Endpoint, prefix: str) -> dict[str, float]:
    client = endpoint.boto()

    def listing() -> int:
        pages = client.get_paginator("list_objects_v2").paginate(
            Bucket=endpoint.bucket, Prefix=f"main/{prefix}"
        )
        return sum(len(p.get("Contents", [])) for p in pages)

    assert listing() == SMALL_KEYS
    return {"seconds": statistics.median(seconds(listing) for _ in range(ROUNDS))}


def _print(out: dict[str, Any]) -> None:
    gv = next(k for k in out["big"] if k.startswith("graveler"))
    big, direct_ = out["big"], out["big"]["direct"]
    table(
        f"64 MiB objects, MB/s (median of {BIG_ROUNDS})",
        ["client", "graveler", "direct store", "ratio", "moto"],
        [
            [
                op,
                big[gv][op],
                direct_[op.split()[1]],
                big[gv][op] / direct_[op.split()[1]],
                big["moto"][op],
            ]
            for op in ("lean PUT", "lean GET", "boto3 PUT", "boto3 GET", "curl PUT", "curl GET")
            if op in big[gv]
        ],
    )
    verified = out["verified"]
    table(
        f"64 MiB GETs with --verify-reads, MB/s (median of {BIG_ROUNDS})",
        ["client", "graveler", "direct store", "ratio"],
        [
            [op, verified[op], verified["direct GET"], verified[op] / verified["direct GET"]]
            for op in ("lean GET", "curl GET")
            if op in verified
        ],
    )
    small = out["small"]
    names = list(small)
    table(
        f"4 KiB objects, calls/s ({THREADS} threads for the lean client)",
        ["call", *names],
        [[op, *(small[n][op] for n in names)] for op in small[names[0]]],
    )
    table(
        f"LIST of {SMALL_KEYS:,} keys (boto3 paginator), seconds",
        ["endpoint", "seconds"],
        [[n, v["seconds"]] for n, v in out["list"].items()],
    )
