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
from tests.serving import LAKEFS_CLIENT_SETTINGS, isolated_env


@pytest.fixture(scope="module", autouse=True)
def _isolated() -> Iterator[None]:
    with isolated_env(
        unset=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", *LAKEFS_CLIENT_SETTINGS),
        setting={"LAKECTL_CONFIG_FILE": "/nonexistent/graveler-test-lakectl.yaml"},
    ):
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
