"""S3 endpoints and load for the gateway suite: ``graveler serve`` and a moto server started
as processes of their own, and the calls timed against them.

Two clients take the same paths. boto3 is what most Python users run; its own work (about a
millisecond a call) caps small calls near 1,000 a second whatever the server. The lean client
sends presigned requests (SigV4 in the query, as browsers, curl and many tools use them) over
kept-alive ``http.client`` connections from several threads, so the figure is the server's.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore.config import Config

GRAVELER = [sys.executable, "-m", "graveler.cli"]


@dataclass(frozen=True)
class Endpoint:
    """An S3 endpoint, a bucket on it and a key that may use it."""

    name: str
    url: str
    bucket: str
    key_id: str
    secret: str

    def boto(self) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id=self.key_id,
            aws_secret_access_key=self.secret,
            region_name="us-east-1",
            config=Config(signature_version="s3v4", retries={"max_attempts": 2}),
        )

    def presigned(self, client: Any, method: str, keys: Sequence[str]) -> list[str]:
        """Path and query of a presigned ``method`` for each key (valid for an hour)."""
        op = {"GET": "get_object", "PUT": "put_object"}[method]
        out = []
        for key in keys:
            url = client.generate_presigned_url(
                op, Params={"Bucket": self.bucket, "Key": key}, ExpiresIn=3600
            )
            parts = urlsplit(url)
            out.append(f"{parts.path}?{parts.query}")
        return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    host, port = urlsplit(url).netloc.split(":")
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


def _stop(process: subprocess.Popen[Any]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def graveler_endpoint(home: Path, workers: int, *options: str) -> Iterator[Endpoint]:
    """``graveler serve --workers N [OPTIONS]`` over ``home`` (with repository ``lake``)."""
    base = [*GRAVELER, "--home", str(home)]
    if not (home / "graveler.db").exists():
        subprocess.run(
            [*base, "repo", "create", "graveler://lake", (home / "ns").as_uri()],
            check=True,
            capture_output=True,
        )
    made = subprocess.run(
        [*base, "--json", "credentials", "create"], check=True, capture_output=True, text=True
    )
    key = json.loads(made.stdout)
    port = _free_port()
    process = subprocess.Popen(
        [*base, "serve", "--port", str(port), "--workers", str(workers), *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url)
        time.sleep(0.5 * workers)  # every worker up
        yield Endpoint(
            f"graveler ({workers} worker{'s' * (workers > 1)})",
            url,
            "lake",
            key["access_key_id"],
            key["secret_access_key"],
        )
    finally:
        _stop(process)


@contextmanager
def moto_endpoint() -> Iterator[Endpoint]:
    """A moto S3 server in a process of its own, with a bucket ``lake``."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url)
        endpoint = Endpoint("moto", url, "lake", "bench", "bench")
        endpoint.boto().create_bucket(Bucket="lake")
        yield endpoint
    finally:
        _stop(process)


def lean_load(
    endpoint: Endpoint, method: str, targets: Sequence[str], body: bytes, threads: int
) -> float:
    """Calls per second of presigned ``method`` requests over ``threads`` kept-alive
    connections (each request checked: status 200, whole body read)."""
    netloc = urlsplit(endpoint.url).netloc
    errors: list[str] = []

    def worker(part: Sequence[str]) -> None:
        conn = http.client.HTTPConnection(netloc, timeout=60)
        for target in part:
            conn.request(method, target, body=body if method == "PUT" else None)
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                errors.append(f"{method} {response.status}")
        conn.close()

    pool = [threading.Thread(target=worker, args=(targets[i::threads],)) for i in range(threads)]
    started = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} failed calls, e.g. {errors[0]}")
    return len(targets) / elapsed


def rate(calls: int, fn: Callable[[int], Any]) -> float:
    """Calls per second of ``fn(i)`` for i in range(calls), one after the other."""
    started = time.perf_counter()
    for i in range(calls):
        fn(i)
    return calls / (time.perf_counter() - started)


def seconds(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def machine_load() -> float:
    return os.getloadavg()[0]
