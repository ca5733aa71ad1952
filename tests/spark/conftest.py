"""One real local Spark session (``local[2]``) for the whole test run, whose Python workers run
this interpreter with this checkout's ``graveler`` and ``providers/`` first on their path.

Nothing here registers the ``graveler`` format: PySpark finds ``pyspark_graveler`` on the
workers' path and registers it by itself, which is what an installed package gets. The JVM shim
(built by ``make venv``) is on the driver's class path, so ``.partitionBy()`` works; the
pure-Python path without it is what ``test_discovery.py`` runs.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from graveler.client import Graveler
from graveler.repository import Repository
from tests.jars import S3A_JARS, jar_paths
from tests.objectstore.conftest import aws_env, moto_endpoint, s3_bucket, s3_client

# The object store suite's loopback moto server, for the S3 data source test.
__all__ = ["aws_env", "moto_endpoint", "s3_bucket", "s3_client"]

ROOT = Path(__file__).resolve().parents[2]
LOCAL_CONFIG = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.driver.memory": "1g",
}


@pytest.fixture(scope="package")
def spark() -> Iterator[object]:
    from graveler_spark import shim_jar, spark_session

    jar = shim_jar()
    assert jar is not None, "the JVM shim is not built: run `make shim` (make venv does)"
    # s3a:// for the S3 gateway's tests (test_s3a.py): on the class path from the start, as
    # one JVM serves the whole package.
    jars = ",".join([jar, *jar_paths(*S3A_JARS)])
    # fresh: a session left by other tests (e.g. the Dagster example's) was built without
    # this checkout on the workers' path. register=False: the format must find itself.
    session = spark_session(
        "local[2]",
        app_name="graveler-tests",
        config={**LOCAL_CONFIG, "spark.jars": jars},
        python=sys.executable,
        pythonpath=[str(ROOT), str(ROOT / "providers")],
        register=False,
        fresh=True,
        log_level="ERROR",
    )
    yield session
    session.stop()


@dataclass
class Lake:
    """A repository plus the options a Spark read or write needs to reach it."""

    gv: Graveler
    repo: Repository

    @property
    def options(self) -> dict[str, str]:
        return {"home": str(self.gv.home), "database_url": self.gv.database_url}

    def uri(self, ref: str, path: str = "") -> str:
        return f"graveler://{self.repo.name}/{ref}" + (f"/{path}" if path else "")


@pytest.fixture
def lake(tmp_path: Path) -> Iterator[Lake]:
    gv = Graveler(home=tmp_path / "home", database_url=f"sqlite:///{tmp_path / 'refs.db'}")
    try:
        yield Lake(gv, gv.create_repository("lake", (tmp_path / "ns").as_uri()))
    finally:
        gv.close()
