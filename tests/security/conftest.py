"""Fixtures of the security suite (``tests/security``): the loopback moto server and the
Spark session of the other suites, and plain clients with a refs database of their own.

Each test here reproduces one way the project used to lose data, run untrusted code or print
a secret, and fails on the code before the fix. Names that did not exist then are imported
inside the tests, so that on the old code each test fails by itself rather than the module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graveler.client import Graveler
from tests.objectstore.conftest import aws_env, moto_endpoint, s3_bucket, s3_client
from tests.spark.conftest import spark

__all__ = ["aws_env", "moto_endpoint", "s3_bucket", "s3_client", "spark"]


@pytest.fixture
def clients(tmp_path: Path) -> Iterator[dict[str, Graveler]]:
    """Two clients, ``one`` and ``two``, each with its own SQLite refs database: two
    deployments that know nothing of each other."""
    made = {
        name: Graveler(home=tmp_path / name, database_url=f"sqlite:///{tmp_path / name}.db")
        for name in ("one", "two")
    }
    try:
        yield made
    finally:
        for client in made.values():
            client.close()
