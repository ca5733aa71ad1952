"""Fixtures for lakeFS's own clients against ``graveler serve``: one server per test module
(tests/lakefs_clients/server.py), reached through the contract tap; a test fails when any
answer it caused broke lakeFS's OpenAPI document.

Nothing here talks to a non-loopback address: proxies are unset and the user's AWS and
lakectl settings are hidden.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.lakefs_clients.server import LakeFS, lakefs_server

ISOLATION = {
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": "/nonexistent/graveler-test-aws-config",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/graveler-test-aws-creds",
    "LAKECTL_CONFIG_FILE": "/nonexistent/graveler-test-lakectl.yaml",
}
UNSET = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "GRAVELER_HOME",
    "GRAVELER_DATABASE_URL",
    "LAKECTL_SERVER_ENDPOINT_URL",
    "LAKECTL_CREDENTIALS_ACCESS_KEY_ID",
    "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY",
    "LAKEFS_ENDPOINT",
    "LAKEFS_ACCESS_KEY_ID",
    "LAKEFS_SECRET_ACCESS_KEY",
)


@pytest.fixture(scope="module", autouse=True)
def _isolated() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for name in UNSET:
            mp.delenv(name, raising=False)
        for name, value in ISOLATION.items():
            mp.setenv(name, value)
        yield


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, _isolated: None) -> Iterator[LakeFS]:
    """The module's server, with local namespaces (``local://NAME``)."""
    with lakefs_server(tmp_path_factory.mktemp("lakefs") / "home") as server:
        yield server


@pytest.fixture(autouse=True)
def _answers_keep_the_contract(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test: every answer the module's server gave through the tap matched
    lakeFS's OpenAPI document."""
    server: LakeFS | None = None
    for name in ("server", "server_s3"):
        if name in request.fixturenames:
            server = request.getfixturevalue(name)
    yield
    if server is not None:
        found = server.tap.take_violations()
        assert not found, "answers that break lakeFS's OpenAPI document:\n" + "\n".join(found)
