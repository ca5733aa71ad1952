"""Fixtures for the S3 gateway: one ``graveler serve`` per test session (started the
documented way, tests/serving.py) with a repository ``lake`` and keys of every kind, and a
moto S3 server beside it, so that tests run each call against both and compare.

Nothing here talks to a non-loopback address: proxies are unset, instance metadata is
disabled, the user's AWS config is hidden.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.config import Config
from moto.server import ThreadedMotoServer

from graveler.client import Graveler
from tests.serving import Key, Served, isolated_env

REPO = "lake"


@pytest.fixture(scope="session", autouse=True)
def _isolated_aws() -> Iterator[None]:
    with isolated_env(unset=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")):
        yield


@dataclass
class Gateway:
    """The session's server and its keys."""

    server: Served
    key: Key  # read-write on every repository
    admin: Key
    read_only: Key
    scoped: Key  # read-write on ``other`` only

    def client(self, key: Key | None = None, **config: Any) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=self.server.url,
            config=Config(**{"retries": {"max_attempts": 1}, **config}),
            **(key or self.key).boto,
        )


@pytest.fixture(scope="session")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    home = tmp_path_factory.mktemp("gateway") / "home"
    with Served(home) as server:
        server.repository(REPO, (home.parent / "ns").as_uri())
        server.repository("other", (home.parent / "other-ns").as_uri())
        yield Gateway(
            server,
            server.credentials(),  # one through the CLI, as users make them
            server.key(admin=True),
            server.key(read_only=True),
            server.key(repositories=("other",)),
        )


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@dataclass
class Twin:
    """The same keys on graveler (bucket ``lake``, a fresh branch) and on moto (a fresh
    bucket): ``key(path)`` is ``BRANCH/path`` on both."""

    gv: Any
    s3: Any
    branch: str
    gv_bucket: str
    s3_bucket: str

    def key(self, path: str) -> str:
        return f"{self.branch}/{path}"

    def both(self) -> list[tuple[Any, str]]:
        return [(self.gv, self.gv_bucket), (self.s3, self.s3_bucket)]


@pytest.fixture(scope="session")
def engine(gateway: Gateway) -> Iterator[Graveler]:
    """A client of the server's own state, in this process, for setting up and checking."""
    with Graveler(gateway.server.home) as client:
        yield client


@pytest.fixture
def branch(engine: Graveler) -> str:
    name = f"t-{uuid.uuid4().hex[:12]}"
    engine.repository(REPO).create_branch(name, "main")
    return name


@pytest.fixture
def twin(gateway: Gateway, moto_url: str, branch: str) -> Twin:
    s3 = boto3.client(
        "s3",
        endpoint_url=moto_url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
        config=Config(retries={"max_attempts": 1}),
    )
    bucket = f"twin-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    return Twin(gateway.client(), s3, branch, REPO, bucket)


def outcome(call: Any) -> tuple[str, Any]:
    """("ok", result) or ("error", (S3 code, HTTP status)) of a boto3 call."""
    from botocore.exceptions import ClientError

    try:
        return "ok", call()
    except ClientError as exc:
        error = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return "error", (error.get("Code"), status)
