"""What the gateway promises when things go wrong: a client that goes away mid-upload stages
nothing; a multipart upload survives ``kill -9`` of the worker that took its parts; a 2 GiB
PUT streams through a worker that stays small; of concurrent put-if-absent writers exactly
one wins, across worker processes on PostgreSQL; a damaged object is caught by the client's
checksum, or by the server with ``--verify-reads``."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

from graveler.client import Graveler
from tests.gateway.conftest import Gateway, outcome
from tests.serving import Key, Served

MIB = 1 << 20


def _signed_put_headers(gateway: Gateway, key: str, body: bytes) -> bytes:
    """The head of a PUT of ``body`` signed by botocore (payload hash included), to send by
    hand."""
    url = f"{gateway.server.url}/lake/{key}"
    request = AWSRequest(
        method="PUT", url=url, data=body, headers={"Content-Length": str(len(body))}
    )
    creds = Credentials(gateway.key.access_key_id, gateway.key.secret_access_key)
    S3SigV4Auth(creds, "s3", "us-east-1").add_auth(request)
    netloc = urlsplit(url).netloc
    lines = [f"PUT /lake/{key} HTTP/1.1", f"Host: {netloc}"]
    lines += [f"{k}: {v}" for k, v in request.headers.items() if k.lower() != "host"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _data_files(home: Path) -> set[str]:
    found = set()
    for root, _, files in os.walk(home.parent / "ns" / "data"):
        found.update(os.path.join(root, f) for f in files)
    return found


def test_a_client_gone_mid_upload_stages_nothing(gateway: Gateway, engine: Graveler, branch: str):
    before = _data_files(gateway.server.home)
    host, port = urlsplit(gateway.server.url).netloc.split(":")
    head = _signed_put_headers(gateway, f"{branch}/half.bin", b"x" * (20 * MIB))
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(head)
        sock.sendall(b"x" * (3 * MIB))
        time.sleep(0.5)
    time.sleep(1.0)
    assert not engine.repository("lake").exists(branch, "half.bin")
    assert _data_files(gateway.server.home) == before  # the partial object was removed
    control = _signed_put_headers(gateway, f"{branch}/whole.bin", b"y" * 1024)
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(control + b"y" * 1024)
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 200"), answer
    assert engine.repository("lake").stat(branch, "whole.bin").size == 1024


def _workers(server: Served) -> list[int]:
    assert server.process is not None
    children = Path(f"/proc/{server.process.pid}/task/{server.process.pid}/children")
    return [int(p) for p in children.read_text().split()]


@pytest.fixture(scope="module")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Key, str]]:
    url = os.environ.get("GRAVELER_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("GRAVELER_TEST_POSTGRES_URL is not set (make test sets it)")
    from graveler.storage.refs.scratch import scratch_schema

    home = tmp_path_factory.mktemp("pg-gateway") / "home"
    with scratch_schema(url, "gw_") as schema_url:
        env = {"GRAVELER_AUTH_ENCRYPT_KEY": "gateway-durability-tests"}
        with Served(home, schema_url, "--workers", "2", env=env) as server:
            server.repository("lake", (home.parent / "ns").as_uri())
            yield server, server.credentials(), schema_url


def _client(server: Served, key: Key) -> Any:
    return boto3.client(
        "s3", endpoint_url=server.url, config=Config(retries={"max_attempts": 6}), **key.boto
    )


def test_multipart_upload_survives_kill_9_of_its_worker(pg_server: tuple[Served, Key, str]):
    server, key, url = pg_server
    parts = [os.urandom(5 * MIB), os.urandom(MIB)]
    for ending in ("complete", "abort"):
        client = _client(server, key)
        upload = client.create_multipart_upload(Bucket="lake", Key=f"main/{ending}.bin")["UploadId"]
        first = client.upload_part(
            Bucket="lake", Key=f"main/{ending}.bin", UploadId=upload, PartNumber=1, Body=parts[0]
        )
        for pid in _workers(server):
            os.kill(pid, signal.SIGKILL)
        client = _client(server, key)  # new connections, to whichever worker is up again
        deadline = time.monotonic() + 30
        while outcome(lambda c=client: c.list_buckets())[0] != "ok":
            assert time.monotonic() < deadline, "no worker came back"
            time.sleep(0.2)
        listed = client.list_parts(Bucket="lake", Key=f"main/{ending}.bin", UploadId=upload)
        assert [p["ETag"] for p in listed["Parts"]] == [first["ETag"]]
        with Graveler(server.home, url) as gv:
            assert not gv.repository("lake").exists("main", f"{ending}.bin")
        if ending == "abort":
            client.abort_multipart_upload(Bucket="lake", Key=f"main/{ending}.bin", UploadId=upload)
            assert (
                outcome(
                    lambda: client.list_parts(Bucket="lake", Key="main/abort.bin", UploadId=upload)
                )[1][0]
                == "NoSuchUpload"
            )
            continue
        second = client.upload_part(
            Bucket="lake", Key=f"main/{ending}.bin", UploadId=upload, PartNumber=2, Body=parts[1]
        )
        done = [{"PartNumber": 1, "ETag": first["ETag"]}, {"PartNumber": 2, "ETag": second["ETag"]}]
        client.complete_multipart_upload(
            Bucket="lake", Key="main/complete.bin", UploadId=upload, MultipartUpload={"Parts": done}
        )
        assert client.get_object(Bucket="lake", Key="main/complete.bin")["Body"].read() == b"".join(
            parts
        )


def test_put_if_absent_has_one_winner_across_workers(pg_server: tuple[Served, Key, str]):
    server, key, _ = pg_server
    results: list[Any] = []
    barrier = threading.Barrier(8)

    def writer(n: int) -> None:
        client = _client(server, key)
        client.list_buckets()  # connect before the race
        barrier.wait()
        results.append(
            outcome(
                lambda: client.put_object(
                    Bucket="lake", Key="main/once", Body=f"{n}".encode(), IfNoneMatch="*"
                )
            )
        )

    for round_ in range(3):
        results.clear()
        threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [r for r in results if r[0] == "ok"]
        assert len(winners) == (1 if round_ == 0 else 0), results
        assert all(r == ("error", ("PreconditionFailed", 412)) for r in results if r[0] != "ok")


def test_a_2_gib_put_streams_through_a_small_worker(tmp_path: Path):
    home = tmp_path / "home"
    size = 2 << 30
    source = tmp_path / "big.bin"
    with open(source, "wb") as f:
        f.truncate(size)  # sparse: reads as zeros without filling the disk twice
    with Served(home) as server:
        server.repository("lake", (tmp_path / "ns").as_uri())
        key = server.credentials()
        client = boto3.client("s3", endpoint_url=server.url, **key.boto)
        assert server.process is not None
        status = Path(f"/proc/{server.process.pid}/status")
        with open(source, "rb") as body:
            client.put_object(Bucket="lake", Key="main/big.bin", Body=body)
        peak_kib = int(
            next(
                line for line in status.read_text().splitlines() if line.startswith("VmHWM")
            ).split()[1]
        )
        assert peak_kib < 150 * 1024, f"the worker peaked at {peak_kib // 1024} MiB"
        head = client.head_object(Bucket="lake", Key="main/big.bin")
        assert head["ContentLength"] == size


def _damage(home: Path, engine: Graveler, branch: str, path: str) -> None:
    """Flip one byte of the stored object behind ``path``, 1 MiB in."""
    entry = engine.repository("lake").stat(branch, path)
    stored = home.parent / "ns" / entry.physical_address
    raw = bytearray(stored.read_bytes())
    raw[MIB + 5] ^= 0xFF
    stored.write_bytes(bytes(raw))


def test_clients_that_ask_for_checksums_catch_a_damaged_object(
    gateway: Gateway, engine: Graveler, branch: str
):
    """boto3 asks for checksums by default: the SHA-256 the gateway returns lets it refuse
    a damaged object itself, end to end (the server streams without hashing)."""
    from botocore.exceptions import FlexibleChecksumError

    body = os.urandom(3 * MIB)
    client = gateway.client()
    client.put_object(Bucket="lake", Key=f"{branch}/damaged.bin", Body=body)
    assert client.get_object(Bucket="lake", Key=f"{branch}/damaged.bin")["Body"].read() == body
    _damage(gateway.server.home, engine, branch, "damaged.bin")
    with pytest.raises(FlexibleChecksumError):
        client.get_object(Bucket="lake", Key=f"{branch}/damaged.bin")["Body"].read()


def test_verify_reads_never_serves_a_damaged_object_whole(tmp_path: Path):
    """With ``--verify-reads`` the server hashes what it streams: a client that does not ask
    for checksums gets a broken-off answer, never the damaged object whole."""
    from botocore.exceptions import BotoCoreError, ClientError

    home = tmp_path / "home"
    with Served(home, None, "--verify-reads") as server:
        server.repository("lake", (tmp_path / "ns").as_uri())
        config = Config(retries={"max_attempts": 1}, response_checksum_validation="when_required")
        client = boto3.client("s3", endpoint_url=server.url, config=config, **server.key().boto)
        body = os.urandom(3 * MIB)
        client.put_object(Bucket="lake", Key="main/damaged.bin", Body=body)
        assert client.get_object(Bucket="lake", Key="main/damaged.bin")["Body"].read() == body
        with Graveler(home) as engine:
            _damage(home, engine, "main", "damaged.bin")
        with pytest.raises((BotoCoreError, ClientError)):
            got = client.get_object(Bucket="lake", Key="main/damaged.bin")["Body"].read()
            assert len(got) < len(body)  # never reached: the body breaks off
            raise AssertionError("a damaged object was served whole")
        part = client.get_object(Bucket="lake", Key="main/damaged.bin", Range="bytes=0-99")
        assert part["Body"].read() == body[:100]  # ranges are served as stored


def test_two_replicas_on_one_database_serve_the_same_repositories(
    pg_server: tuple[Served, Key, str], tmp_path: Path
):
    """A second ``graveler serve`` on the same PostgreSQL (another home, as on another host,
    the same server key): one multipart upload spread over both, then read from either."""
    first, key, url = pg_server
    env = {"GRAVELER_AUTH_ENCRYPT_KEY": "gateway-durability-tests"}
    with Served(tmp_path / "other-home", url, env=env) as second:
        a, b = _client(first, key), _client(second, key)
        parts = [os.urandom(5 * MIB), b"end"]
        upload = a.create_multipart_upload(Bucket="lake", Key="main/replicas.bin")["UploadId"]
        etags = [
            b.upload_part(
                Bucket="lake", Key="main/replicas.bin", UploadId=upload, PartNumber=1, Body=parts[0]
            )["ETag"],
            a.upload_part(
                Bucket="lake", Key="main/replicas.bin", UploadId=upload, PartNumber=2, Body=parts[1]
            )["ETag"],
        ]
        done = [{"PartNumber": n + 1, "ETag": e} for n, e in enumerate(etags)]
        b.complete_multipart_upload(
            Bucket="lake", Key="main/replicas.bin", UploadId=upload, MultipartUpload={"Parts": done}
        )
        for client in (a, b):
            assert client.get_object(Bucket="lake", Key="main/replicas.bin")[
                "Body"
            ].read() == b"".join(parts)
        assert [
            o["Key"] for o in b.list_objects_v2(Bucket="lake", Prefix="main/replicas")["Contents"]
        ] == ["main/replicas.bin"]
