"""Fixtures of the UI tests: the sample repository, and apps over it reached in-process over
HTTP (Starlette's test client).

``http`` is the read-only app over one sample repository shared by the package's tests
(built once: tests using it must not change it); ``gv`` / ``lake`` are a fresh client and
sample for tests that write, and ``writer`` the read-write app over them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.server.ui import UIOptions, create_app
from tests.ui import sample


@pytest.fixture(scope="package")
def shared_gv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graveler]:
    client = Graveler(home=tmp_path_factory.mktemp("ui-shared"))
    sample.build(client)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="package")
def shared_lake(shared_gv: Graveler) -> Repository:
    return shared_gv.repository("lake")


@pytest.fixture
def http(shared_gv: Graveler) -> TestClient:
    """The read-only UI over the shared sample repository."""
    return TestClient(create_app(shared_gv), raise_server_exceptions=False)


@pytest.fixture
def gv(tmp_path) -> Iterator[Graveler]:  # type: ignore[no-untyped-def]
    client = Graveler(home=tmp_path / "home")
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def lake(gv: Graveler) -> Repository:
    return sample.build(gv)


@pytest.fixture
def writer(gv: Graveler, lake: Repository) -> TestClient:
    """The UI with write actions, over a fresh sample repository."""
    return TestClient(create_app(gv, UIOptions(allow_writes=True)), raise_server_exceptions=False)
