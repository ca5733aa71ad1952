"""Request bodies are bounded: one declared over S3's 5 GiB limit is refused before any of it
is read (``EntityTooLarge``), one that stalls ends with S3's ``RequestTimeout`` (400) and
stages nothing, and a request the HTTP parser cannot read (``Content-Length: -1``) gets S3's
XML error, not uvicorn's plain text.

Reproduced before the fix: a signed PUT declaring 10 GiB and sending 3 bytes got no answer
(the worker waited for the rest forever); ``Content-Length: -1`` got ``400 Invalid HTTP
request received.`` as ``text/plain``.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from graveler.client import Graveler
from tests.gateway.conftest import REPO, Gateway
from tests.serving import Key, Served

GIB = 1 << 30


def _signed_head(url: str, key: Key, path: str, length: int, **extra: str) -> bytes:
    """The request line and headers of a signed PUT declaring ``length`` bytes."""
    headers = {"Content-Length": str(length), "x-amz-content-sha256": "UNSIGNED-PAYLOAD", **extra}
    request = AWSRequest(method="PUT", url=url + path, headers=headers)
    creds = Credentials(key.access_key_id, key.secret_access_key)
    S3SigV4Auth(creds, "s3", "us-east-1").add_auth(request)
    host = urlsplit(url).netloc
    lines = [f"PUT {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{k}: {v}" for k, v in request.headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _exchange(url: str, data: bytes, timeout: float = 20.0) -> tuple[bytes, float]:
    """Send ``data`` on a fresh connection and read the answer until the server closes it;
    (answer, seconds it took)."""
    parts = urlsplit(url)
    started = time.monotonic()
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while True:
            piece = sock.recv(65536)
            if not piece:
                break
            answer += piece
            if b"</Error>" in answer:
                break
    return answer, time.monotonic() - started


def _xml_error(answer: bytes, status: int, code: str) -> None:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status} ".encode()), answer[:300]
    assert b"content-type: application/xml" in head.lower()
    rid = [ln.split(b":", 1)[1].strip() for ln in head.split(b"\r\n") if b"x-amz-request-id" in ln]
    assert rid and b"<RequestId>" + rid[0] + b"</RequestId>" in body
    assert f"<Code>{code}</Code>".encode() in body


@pytest.mark.parametrize("path", ["/{repo}/{branch}/big.bin", "/{repo}/{branch}/mp?partNumber=1"])
def test_a_body_declared_over_the_limit_is_refused_before_reading(
    gateway: Gateway, engine: Graveler, branch: str, path: str
):
    target = path.format(repo=REPO, branch=branch)
    if "partNumber" in target:
        upload = gateway.client().create_multipart_upload(Bucket=REPO, Key=f"{branch}/mp")
        target += f"&uploadId={upload['UploadId']}"
    head = _signed_head(gateway.server.url, gateway.key, target, 10 * GIB)
    answer, seconds = _exchange(gateway.server.url, head + b"abc")
    _xml_error(answer, 400, "EntityTooLarge")
    assert b"<MaxSizeAllowed>5368709120</MaxSizeAllowed>" in answer
    assert b"connection: close" in answer.lower() and seconds < 10
    assert list(engine.repository(REPO).diff_uncommitted(branch)) == []


def test_a_negative_content_length_gets_s3s_error(gateway: Gateway):
    request = f"PUT /{REPO}/main/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n"
    answer, _ = _exchange(gateway.server.url, request.encode())
    _xml_error(answer, 400, "InvalidRequest")


@pytest.fixture(scope="module")
def impatient(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Key]]:
    home = tmp_path_factory.mktemp("body-timeout") / "home"
    with Served(home, None, "--body-timeout", "1") as server:
        server.repository(REPO, (home.parent / "ns").as_uri())
        yield server, server.credentials()


def test_a_stalled_body_times_out_and_stages_nothing(impatient: tuple[Served, Key]):
    server, key = impatient
    head = _signed_head(server.url, key, f"/{REPO}/main/stalled.bin", 10)
    answer, seconds = _exchange(server.url, head + b"abc")  # 3 of the 10 bytes, then nothing
    _xml_error(answer, 400, "RequestTimeout")
    assert 0.9 < seconds < 10
    with Graveler(server.home) as gv:
        repo = gv.repository(REPO)
        assert list(repo.diff_uncommitted("main")) == []
        assert not repo.exists("main", "stalled.bin")
    client = boto3.client("s3", endpoint_url=server.url, **key.boto)  # the control
    client.put_object(Bucket=REPO, Key="main/whole.bin", Body=b"0123456789")
    assert client.get_object(Bucket=REPO, Key="main/whole.bin")["Body"].read() == b"0123456789"
