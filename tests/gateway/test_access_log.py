"""The access log of ``graveler serve --access-log``: one line per request, on stderr, with
its request ID (the one sent back as ``x-amz-request-id`` and in error bodies), the access
key ID (never the secret), the interface, operation, repository, ref, status, bytes in and
out and milliseconds; JSON under ``--json``, ``key=value`` text otherwise; quiet by default
on loopback.

Reproduced before the fix: ``graveler serve`` printed its banner and nothing else.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway
from tests.serving import Key, Served

FIELDS = [
    "time",
    "request_id",
    "interface",
    "method",
    "path",
    "remote",
    "access_key_id",
    "operation",
    "repository",
    "ref",
    "status",
    "bytes_in",
    "bytes_out",
    "ms",
]


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("access-log") / "home"
    with Served(home, None, "--access-log") as server:  # JSON: Served passes --json
        server.repository("lake", (home.parent / "ns").as_uri())
        yield server


def _s3(server: Served, key: Key) -> Any:
    config = Config(retries={"max_attempts": 1})
    return boto3.client("s3", endpoint_url=server.url, config=config, **key.boto)


def _line(server: Served, request_id: str) -> dict[str, Any]:
    """The JSON access-log line of ``request_id`` (waiting for it: a request is logged just
    after its answer)."""
    for _ in range(100):
        for line in server.stderr().splitlines():
            if line.startswith("{") and request_id in line:
                doc: dict[str, Any] = json.loads(line)
                if doc["request_id"] == request_id:
                    return doc
        time.sleep(0.05)
    raise AssertionError(f"no access-log line for {request_id}: {server.stderr()[-2000:]}")


def _raw(server: Served, method: str, path: str) -> http.client.HTTPResponse:
    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    conn.request(method, path)
    answer = conn.getresponse()
    answer.read()
    conn.close()
    return answer


def test_s3_requests_are_logged_with_their_ids(logged: Served):
    key = logged.credentials()
    client = _s3(logged, key)
    body = b"id,amount\n1,9.50\n"
    put = client.put_object(Bucket="lake", Key="main/raw/events.csv", Body=body)
    doc = _line(logged, put["ResponseMetadata"]["RequestId"])
    assert list(doc) == FIELDS
    assert doc["interface"] == "s3" and doc["operation"] == "PutObject"
    assert (doc["repository"], doc["ref"], doc["access_key_id"]) == (
        "lake",
        "main",
        key.access_key_id,
    )
    assert doc["status"] == 200 and doc["bytes_in"] >= len(body) and doc["ms"] > 0
    got = client.get_object(Bucket="lake", Key="main/raw/events.csv")
    assert got["Body"].read() == body
    read = _line(logged, got["ResponseMetadata"]["RequestId"])
    assert (read["operation"], read["bytes_out"], read["method"]) == ("GetObject", len(body), "GET")
    assert key.secret_access_key not in logged.stderr()


def test_refusals_carry_one_request_id_in_header_body_and_log(logged: Served):
    reader = _s3(logged, logged.credentials("--read-only"))
    bodies: list[bytes] = []
    reader.meta.events.register(
        "before-parse.s3.PutObject", lambda response_dict, **_: bodies.append(response_dict["body"])
    )
    with pytest.raises(ClientError) as refused:
        reader.put_object(Bucket="lake", Key="main/x.txt", Body=b"x")
    rid = refused.value.response["ResponseMetadata"]["RequestId"]  # x-amz-request-id
    assert f"<RequestId>{rid}</RequestId>".encode() in bodies[0]
    doc = _line(logged, rid)
    assert (doc["status"], doc["operation"], doc["interface"]) == (403, "PutObject", "s3")


def test_every_interface_is_logged(logged: Served):
    expected = {
        "/repos/lake": ("ui", 200, "branches"),
        "/iceberg/api/v1/config?warehouse=lake": ("iceberg", 401, ""),
        "/api/v1/repositories": ("api", 401, "list_repositories"),
        "/_health": ("health", 200, ""),
    }
    for path, (interface, status, operation) in expected.items():
        answer = _raw(logged, "GET", path)
        doc = _line(logged, answer.getheader("x-amz-request-id") or "?")
        assert doc["repository"] == ("lake" if interface == "ui" else ""), path
        assert (doc["interface"], doc["status"], doc["operation"]) == (
            interface,
            status,
            operation,
        ), path


def test_text_lines_and_quiet_by_default(tmp_path: Any, gateway: Gateway):
    home = tmp_path / "home"
    with Served(home, None, "--access-log", "text") as server:
        answer = _raw(server, "GET", "/_health")
        rid = answer.getheader("x-amz-request-id")
        for _ in range(100):
            lines = [ln for ln in server.stderr().splitlines() if f"request_id={rid}" in ln]
            if lines:
                break
            time.sleep(0.05)
        assert lines and lines[0].startswith("time=")
        assert " interface=health method=GET path=/_health " in lines[0]
        assert ' access_key_id="" ' in lines[0] and " status=200 " in lines[0]
    gateway.client().list_buckets()  # the session's server: loopback, no --access-log
    assert "request_id" not in gateway.server.stderr()
