"""A Spark standalone cluster (one master, two one-core workers on 127.0.0.1, started from the
pyspark package's scripts with clean environments) for the whole package, refs in PostgreSQL
(a scratch schema) and objects in the loopback moto S3 server.

As root the workers also get a private tmpfs over ``private/`` (``unshare -m``): for a
``file://`` namespace there, each worker has a disk of its own. Not being root is a skip only
outside CI; in CI (``CI`` set) a missing privilege, PostgreSQL or Java fails loudly.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest

from graveler.client import Graveler
from graveler.storage.refs.scratch import scratch_schema
from tests.objectstore.conftest import moto_endpoint
from tests.spark_cluster.cluster import StandaloneCluster, can_unshare, clean_env

__all__ = ["moto_endpoint"]

ROOT = Path(__file__).resolve().parents[2]
JOBS = Path(__file__).resolve().parent / "jobs"
PG_URL = os.environ.get("GRAVELER_TEST_POSTGRES_URL")
#: In CI and under `make test` (which sets the PostgreSQL URL) a missing piece is a failure.
IN_CI = bool(os.environ.get("CI") or PG_URL)
#: Distinctive credentials: they must never show up in a log, an error or an event log.
ACCESS_KEY = "AKIAGRAVELER" + uuid.uuid4().hex[:8].upper()
SECRET_KEY = "graveler-secret-" + uuid.uuid4().hex
#: Every job: no UI, small JVMs, one executor per one-core worker.
BASE_CONF = {
    "spark.ui.enabled": "false",
    "spark.driver.memory": "512m",
    "spark.executor.memory": "512m",
    "spark.executor.cores": "1",
    "spark.cores.max": "2",
    "spark.sql.shuffle.partitions": "4",
}


def require(condition: bool, reason: str) -> None:
    """Skip without ``condition`` on a developer machine; fail in CI and under `make test`."""
    if not condition:
        if IN_CI:
            pytest.fail(f"the cluster tests cannot run in CI: {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="package")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    require(shutil.which("java") is not None, "no java on PATH")
    root = tmp_path_factory.mktemp("cluster")
    private = root / "private" if can_unshare() else None
    spark_cluster = StandaloneCluster(root, sys.executable, workers=2, private_dir=private)
    spark_cluster.start()
    try:
        yield spark_cluster
    finally:
        spark_cluster.stop()


@pytest.fixture(scope="package")
def pg_url() -> Iterator[str]:
    require(bool(PG_URL), "GRAVELER_TEST_POSTGRES_URL is not set (make test sets it)")
    assert PG_URL is not None
    with scratch_schema(PG_URL, "cluster_") as url:
        yield url


@dataclass
class Lake:
    """Where the cluster jobs keep refs and objects, and the test's own client on them."""

    endpoint: str
    bucket: str
    database_url: str
    gv: Graveler

    def namespace(self, name: str) -> str:
        return f"s3://{self.bucket}/{name}"

    def bucket_keys(self, prefix: str) -> dict[str, int]:
        client = s3_client(self.endpoint)
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return {o["Key"]: o["Size"] for page in pages for o in page.get("Contents", [])}


def s3_client(endpoint: str) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )


@pytest.fixture(scope="package")
def lake(
    moto_endpoint: str, pg_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Lake]:
    with pytest.MonkeyPatch.context() as env:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
            env.delenv(name, raising=False)
        env.setenv("NO_PROXY", "127.0.0.1,localhost")
        bucket = f"graveler-cluster-{uuid.uuid4().hex[:12]}"
        s3_client(moto_endpoint).create_bucket(Bucket=bucket)
        options = {
            "endpoint_url": moto_endpoint,
            "region": "us-east-1",
            "access_key_id": ACCESS_KEY,
            "secret_access_key": SECRET_KEY,
        }
        home = tmp_path_factory.mktemp("test-home")
        with Graveler(home, pg_url, store_options=options) as gv:
            yield Lake(moto_endpoint, bucket, pg_url, gv)


def driver_env(home: Path, **settings: str) -> dict[str, str]:
    """A spark-submit driver's whole environment: a clean host plus ``settings``. The
    checkout is on its Python path so that PySpark finds ``pyspark_graveler`` there (an
    installed package is found in site-packages)."""
    home.mkdir(parents=True, exist_ok=True)
    return clean_env(
        home,
        sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "providers")]),
        **settings,
    )


def env_settings(lake: Lake) -> dict[str, str]:
    """Settings given to a driver through its environment only, as the README says."""
    return {
        "GRAVELER_DATABASE_URL": lake.database_url,
        "GRAVELER_S3_ENDPOINT_URL": lake.endpoint,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_DEFAULT_REGION": "us-east-1",
        "NO_PROXY": "127.0.0.1,localhost",
    }
