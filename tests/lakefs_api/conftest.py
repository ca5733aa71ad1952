"""Fixtures for the lakeFS API contract tests: one ``graveler serve`` per session (started
the documented way, tests/serving.py), a moto S3 server beside it for S3 namespaces
(presigned URLs, direct writes), keys of every kind, and :class:`Api`, an HTTP client that
validates every answer against lakeFS's OpenAPI document with openapi-core.

The document is lakeFS's own, ``api/swagger.yml`` of the pinned lakeFS release, which
``make lakefs-openapi`` (part of ``make test``) puts in ``.suites/``; or the file named by
``GRAVELER_LAKEFS_OPENAPI``. Without it these tests fail under CI and are skipped elsewhere,
saying why. Nothing here talks to a non-loopback address.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
from moto.server import ThreadedMotoServer

from tests.lakefs_clients.contract import DEFAULT as DEFAULT_SPEC
from tests.serving import LOOPBACK_AWS, Key, Served, isolated_env

REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC_ENV = "GRAVELER_LAKEFS_OPENAPI"
SPEC = Path(os.environ.get(SPEC_ENV) or DEFAULT_SPEC)
#: The server's environment: AWS clients on loopback with moto's dummy keys.
ISOLATION = {
    **LOOPBACK_AWS,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}
BUCKET = "lakefs-api-tests"


@pytest.fixture(scope="session")
def spec() -> Any:
    if not SPEC.is_file():
        missing = f"lakeFS's OpenAPI document is not at {SPEC}: run 'make lakefs-openapi'"
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    from openapi_core import OpenAPI

    return OpenAPI.from_file_path(str(SPEC))


@pytest.fixture(scope="session", autouse=True)
def _isolated() -> Iterator[None]:
    with isolated_env(unset=("GRAVELER_S3_ENDPOINT_URL",), setting=ISOLATION):
        yield


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=url).create_bucket(Bucket=BUCKET)
    yield url
    server.stop()


class ContractError(AssertionError):
    """An answer that lakeFS's OpenAPI document does not allow."""


@dataclass
class Api:
    """An HTTP client of ``/api/v1`` with one key; every answer is validated against the
    OpenAPI document unless ``validate=False`` (paths the document does not have)."""

    base: str
    spec: Any
    auth: tuple[str, str] | None
    session: requests.Session = field(default_factory=requests.Session)

    def call(
        self, method: str, path: str, *, validate: bool = True, **kwargs: Any
    ) -> requests.Response:
        kwargs.setdefault("auth", self.auth)
        kwargs.setdefault("allow_redirects", False)
        response = self.session.request(method, self.base + path, timeout=60, **kwargs)
        if validate:
            check(self.spec, response)
        return response

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.call("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.call("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> requests.Response:
        return self.call("PUT", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> requests.Response:
        return self.call("DELETE", path, **kwargs)

    def head(self, path: str, **kwargs: Any) -> requests.Response:
        return self.call("HEAD", path, **kwargs)

    def ok(self, method: str, path: str, status: int = 200, **kwargs: Any) -> Any:
        """The JSON answer of a call that must succeed with ``status``."""
        response = self.call(method, path, **kwargs)
        assert response.status_code == status, (response.status_code, response.text)
        return response.json() if response.content and _is_json(response) else response

    def with_key(self, key: Key | None) -> Api:
        auth = None if key is None else (key.access_key_id, key.secret_access_key)
        return Api(self.base, self.spec, auth)


def _is_json(response: requests.Response) -> bool:
    return response.headers.get("content-type", "").startswith("application/json")


class _Opaque:
    """An object download seen as the document describes it, where lakeFS itself departs
    from its document (and graveler does as lakeFS does):

    * lakeFS sends the object's own Content-Type, where the document names
      ``application/octet-stream`` for the opaque bytes;
    * the document gives a 206's Content-Range the pattern of a *request's* Range header
      (``bytes=0-3``); lakeFS sends RFC 9110's ``bytes 0-3/10``, which is checked here
      instead.

    Status, the other headers and the length are validated all the same."""

    def __init__(self, response: Any) -> None:
        self._response = response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._response, name)

    @property
    def content_type(self) -> str:
        return "application/octet-stream"

    @property
    def headers(self) -> Any:
        headers = self._response.headers
        found = headers.get("Content-Range")
        if found is not None:
            assert re.fullmatch(r"bytes \d+-\d+/\d+", found), found
            headers.remove("Content-Range")
        return headers


def check(spec: Any, response: requests.Response) -> None:
    """Validate ``response`` (and the request it answers) against the OpenAPI document."""
    from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

    sent = response.request.copy()
    if not isinstance(sent.body, bytes | str | None):
        sent.body = None  # a streamed body (the answer is what is validated)
    request = RequestsOpenAPIRequest(sent)
    seen: Any = RequestsOpenAPIResponse(response)
    if response.status_code in (200, 206) and "/objects?" in str(response.request.url):
        seen = _Opaque(seen)
    try:
        spec.validate_response(request, seen)
    except Exception as exc:
        detail = getattr(exc, "__cause__", None) or exc
        raise ContractError(
            f"{response.request.method} {response.request.url} -> {response.status_code} "
            f"{response.text[:300]!r}: {exc} ({detail!r})"
        ) from exc


def error_of(response: requests.Response, status: int) -> str:
    """The message of lakeFS's JSON error answer with ``status``."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    doc = response.json()
    assert isinstance(doc.get("message"), str) and doc["message"], doc
    return str(doc["message"])


@dataclass
class Server:
    """The session's server, its keys and its S3 bucket."""

    served: Served
    spec: Any
    moto_url: str
    admin: Key
    writer: Key  # read-write on every repository
    reader: Key  # read-only
    scoped: Key  # read-write on repositories "scoped-*" only (see SCOPED)

    @property
    def base(self) -> str:
        return str(self.served.urls["lakefs"])

    def api(self, key: Key | None = None) -> Api:
        key = self.admin if key is None else key
        return Api(self.base, self.spec, (key.access_key_id, key.secret_access_key))

    def anonymous(self) -> Api:
        return Api(self.base, self.spec, None)


SCOPED = ("scoped-one", "scoped-two")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory, spec: Any, moto_url: str) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("lakefs-api") / "home"
    env = {
        **ISOLATION,
        "GRAVELER_S3_ENDPOINT_URL": moto_url,
        "GRAVELER_HOOK_MODULES": "tests.lakefs_api.hookfuncs",
    }
    with Served(home, None, env=env) as served:
        yield Server(
            served,
            spec,
            moto_url,
            served.credentials("--admin"),  # through the CLI, as users make them
            served.key(),
            served.key(read_only=True),
            served.key(repositories=SCOPED),
        )


@pytest.fixture(scope="session")
def api(server: Server) -> Api:
    """The admin key's client."""
    return server.api()


def unique(prefix: str = "repo") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def repo(api: Api) -> str:
    """A repository on local storage shared by the session's tests (each works on its own
    branch or paths)."""
    name = unique("lake")
    api.ok(
        "POST", "/repositories", 201, json={"name": name, "storage_namespace": f"local://{name}"}
    )
    return name


@pytest.fixture(scope="session")
def s3_repo(api: Api) -> str:
    """A repository on the moto S3 bucket."""
    name = unique("s3lake")
    namespace = f"s3://{BUCKET}/{name}"
    api.ok("POST", "/repositories", 201, json={"name": name, "storage_namespace": namespace})
    return name


@pytest.fixture
def branch(api: Api, repo: str) -> str:
    """A fresh branch of ``repo`` from main."""
    name = unique("b")
    api.ok("POST", f"/repositories/{repo}/branches", 201, json={"name": name, "source": "main"})
    return name


def upload(api: Api, repo: str, branch: str, path: str, data: bytes, **kwargs: Any) -> Any:
    """Upload ``data`` to ``path`` (octet-stream) and return its ObjectStats."""
    return api.ok(
        "POST",
        f"/repositories/{repo}/branches/{branch}/objects",
        201,
        params={"path": path, **kwargs.pop("params", {})},
        data=data,
        headers={"Content-Type": "application/octet-stream", **kwargs.pop("headers", {})},
        **kwargs,
    )


def commit(api: Api, repo: str, branch: str, message: str = "a commit", **body: Any) -> Any:
    return api.ok(
        "POST",
        f"/repositories/{repo}/branches/{branch}/commits",
        201,
        json={"message": message, **body},
    )
