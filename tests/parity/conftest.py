"""A client factory for tests that need their own hooks or settings."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from graveler import ClientSettings, Graveler, HookRegistry, Repository
from tests.objectstore.conftest import aws_env, moto_endpoint, s3_bucket, s3_client

__all__ = ["aws_env", "make_repo", "moto_endpoint", "s3_bucket", "s3_client"]


@pytest.fixture
def make_repo(tmp_path, database_url: str) -> Iterator[Callable[..., Repository]]:
    """``make_repo(hooks=..., **settings)``: a repository "lake" in a client of its own."""
    clients: list[Graveler] = []

    def make(hooks: HookRegistry | None = None, **settings: object) -> Repository:
        home = tmp_path / f"client{len(clients)}"
        gv = Graveler(
            home=home, database_url=database_url, hooks=hooks, settings=ClientSettings(**settings)
        )
        clients.append(gv)
        if len(clients) == 1:
            return gv.create_repository("lake", (tmp_path / "lake-ns").as_uri())
        return gv.repository("lake")

    yield make
    for gv in clients:
        gv.close()
