"""Fixtures for the object store tests.

``store`` is parametrized over every backend: memory, local (under ``tmp_path``) and S3 (a
session-wide moto server on 127.0.0.1 with a fresh bucket per test). Nothing here talks to a
non-loopback address: proxies are unset, instance metadata is disabled, credentials are dummies.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from graveler.storage.objectstore.local import LocalObjectStore
from graveler.storage.objectstore.memory import clear_memory_stores, open_memory_store
from graveler.storage.objectstore.port import ObjectStore
from graveler.storage.objectstore.s3 import S3ObjectStore
from tests.serving import ESCAPES

BACKENDS = ["memory", "local", "s3"]
S3_PREFIX = "pre/fix"


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    assert host == "127.0.0.1"
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy credentials and no way out of loopback (no proxies, no IMDS, no user config)."""
    for name in (*ESCAPES, "GRAVELER_S3_ENDPOINT_URL", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/graveler-test-aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/graveler-test-aws-creds")


@pytest.fixture
def s3_client(moto_endpoint: str, aws_env: None) -> Any:
    return boto3.client("s3", endpoint_url=moto_endpoint, region_name="us-east-1")


@pytest.fixture
def s3_bucket(s3_client: Any) -> str:
    name = f"graveler-test-{uuid.uuid4().hex[:16]}"
    s3_client.create_bucket(Bucket=name)
    return name


@pytest.fixture
def s3_store(s3_bucket: str, moto_endpoint: str) -> S3ObjectStore:
    return S3ObjectStore(s3_bucket, S3_PREFIX, endpoint_url=moto_endpoint, max_attempts=3)


@pytest.fixture
def local_store(tmp_path: Path) -> LocalObjectStore:
    return LocalObjectStore(str(tmp_path / "store"))


@pytest.fixture
def memory_store() -> Iterator[ObjectStore]:
    clear_memory_stores()
    yield open_memory_store("conformance")
    clear_memory_stores()


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> ObjectStore:
    """Every backend in turn."""
    store: ObjectStore = request.getfixturevalue(f"{request.param}_store")
    return store


@pytest.fixture
def reopen_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Options ``open_object_store`` needs to reach the same store again."""
    if "s3" in request.node.callspec.params.get("store", ""):
        return {"endpoint_url": request.getfixturevalue("moto_endpoint")}
    return {}
