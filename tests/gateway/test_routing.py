"""Which interface of ``graveler serve`` answers a request (the rules of docs/s3-gateway.md,
"Which interface answers"): an S3 request always gets S3's XML, signed or not, whatever the
web UI's routes are; the UI's pages, the Iceberg catalog, lakeFS's API and the health check
keep their own paths and their own error forms.

Reproduced before the fix: on loopback an unsigned ``GET /lake/main/raw/events.csv`` and an
unsigned PUT got the UI's 404 page (``text/html``); beyond loopback an unsigned GET got a
303 to ``/sign-in``.
"""

from __future__ import annotations

import http.client
import json
import re
from typing import Any
from urllib.parse import urlsplit

import pytest

from graveler.client import Graveler
from graveler.server.routing import API, HEALTH, ICEBERG, S3, UI, interface_of
from tests.gateway.conftest import REPO, Gateway
from tests.serving import Served


def _scope(method: str, path: str, query: str = "", **headers: str) -> dict[str, Any]:
    raw = [(k.replace("_", "-").lower().encode(), v.encode()) for k, v in headers.items()]
    return {"method": method, "path": path, "query_string": query.encode(), "headers": raw}


RULES = [
    # S3's own signals win everywhere
    (_scope("GET", "/repos/lake", authorization="AWS4-HMAC-SHA256 Credential=x"), S3),
    (_scope("GET", "/", authorization="AWS GRVL:sig"), S3),
    (_scope("GET", "/iceberg/api/v1/config", x_amz_date="20260101T000000Z"), S3),
    (_scope("GET", "/", "X-Amz-Signature=abc&X-Amz-Credential=x"), S3),
    (_scope("GET", "/static/x.css", "AWSAccessKeyId=k&Expires=1&Signature=s"), S3),
    # the other interfaces' paths
    (_scope("GET", "/api/v1/repositories"), API),
    (_scope("POST", "/api/v1"), API),
    (_scope("GET", "/iceberg/api/v1/config", "warehouse=lake"), ICEBERG),
    (_scope("GET", "/_health"), HEALTH),
    # S3 sub-resources and SDKs, then the UI's pages
    (_scope("GET", "/", "list-type=2"), S3),
    (_scope("POST", "/repos", "uploads"), S3),
    (_scope("GET", "/runs/x", "versionId=3"), S3),
    (_scope("GET", "/", user_agent="Boto3/1.36 md/Botocore#1.36"), S3),
    (_scope("GET", "/"), UI),
    (_scope("GET", "/repos/lake/compare", "left=main&right=etl-1"), UI),
    (_scope("POST", "/sign-in"), UI),
    (_scope("HEAD", "/static/graveler.css"), UI),
    # everything else is S3's
    (_scope("GET", "/lake/main/raw/events.csv"), S3),
    (_scope("PUT", "/lake/main/x.txt"), S3),
    (_scope("PUT", "/repos/main/x.txt"), S3),
    (_scope("DELETE", "/repos/lake"), S3),
    (_scope("GET", "/lake"), S3),
    (_scope("GET", "/apiv1"), S3),
]


@pytest.mark.parametrize(("scope", "interface"), RULES)
def test_the_rules(scope: dict[str, Any], interface: str):
    assert interface_of(scope) == interface


def test_virtual_host_requests_are_s3s():
    scope = _scope("GET", "/", host="lake.s3.example.com:8000")
    assert interface_of(scope, "s3.example.com") == S3
    assert interface_of(scope, None) == UI


def _send(url: str, method: str, path: str, body: bytes | None = None, **headers: str) -> Any:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    conn.request(method, path, body=body, headers=headers)
    answer = conn.getresponse()
    data = answer.read()
    conn.close()
    return answer, data


def _s3_error(answer: Any, data: bytes, code: str, status: int) -> None:
    assert answer.status == status
    assert answer.getheader("content-type") == "application/xml"
    rid = answer.getheader("x-amz-request-id")
    assert rid and f"<RequestId>{rid}</RequestId>".encode() in data
    assert f"<Code>{code}</Code>".encode() in data


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/lake/main/raw/events.csv", None),
        ("PUT", "/lake/{branch}/unsigned.txt", b"x"),
        ("DELETE", "/lake/{branch}/unsigned.txt", None),
        ("POST", "/lake/{branch}/unsigned.txt?uploads", None),
        ("GET", "/lake?list-type=2&prefix=main/", None),
        ("GET", "/lake/main/x?versionId=abc", None),
        ("GET", "/repos", None),  # a repository named like a UI page: POST/GET of the UI only
    ],
)
def test_unsigned_s3_requests_get_s3_errors(
    gateway: Gateway, engine: Graveler, branch: str, method: str, path: str, body: bytes | None
):
    target = path.format(branch=branch)
    answer, data = _send(gateway.server.url, method, target, body)
    if target == "/repos":
        assert answer.getheader("content-type", "").startswith("text/html")  # the UI's
        return
    _s3_error(answer, data, "AccessDenied", 403)
    assert list(engine.repository(REPO).diff_uncommitted(branch)) == []


def test_head_and_foreign_signatures_answer_as_s3(gateway: Gateway):
    answer, data = _send(gateway.server.url, "HEAD", "/lake/main/x")
    assert answer.status == 403 and data == b"" and answer.getheader("x-amz-request-id")
    auth = "AWS GRVLNOSUCHKEY000000:c2lnbmF0dXJl"
    answer, data = _send(gateway.server.url, "GET", "/repos/lake", Authorization=auth)
    _s3_error(answer, data, "InvalidAccessKeyId", 403)


def test_the_other_interfaces_keep_their_forms(gateway: Gateway):
    url = gateway.server.url
    page, html = _send(url, "GET", "/repos/lake")
    assert page.status == 200 and page.getheader("content-type").startswith("text/html")
    assert b"<html" in html
    health, data = _send(url, "GET", "/_health")
    assert health.status == 200 and json.loads(data) == {"status": "ok"}
    catalog, data = _send(url, "GET", "/iceberg/api/v1/config?warehouse=lake")
    assert catalog.status == 401 and json.loads(data)["error"]["type"] == "NotAuthorizedException"
    api, data = _send(url, "GET", "/api/v1/repositories")
    assert api.status == 401 and api.getheader("content-type") == "application/json"
    error = json.loads(data)  # lakeFS's error form, with the request's ID
    assert "message" in error and error["request_id"] == api.getheader("x-amz-request-id")
    for answer in (page, health, catalog, api):
        assert re.fullmatch(r"[0-9A-F]{16}", answer.getheader("x-amz-request-id") or "")


@pytest.fixture(scope="module")
def exposed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    home = tmp_path_factory.mktemp("routing-exposed") / "home"
    with Served(home, None, "--host", "0.0.0.0") as server:
        server.repository("lake", (home.parent / "ns").as_uri())
        yield server


def test_beyond_loopback_s3_requests_are_not_sent_to_sign_in(exposed: Served):
    for method, path in (("GET", "/lake/main/raw/events.csv"), ("PUT", "/lake/main/x.txt")):
        answer, data = _send(exposed.url, method, path, b"x" if method == "PUT" else None)
        _s3_error(answer, data, "AccessDenied", 403)
    page, _ = _send(exposed.url, "GET", "/repos/lake")
    assert page.status == 303 and page.getheader("location").startswith("/sign-in")
