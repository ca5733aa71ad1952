"""Spark with lakeFS's Hadoop FileSystem (``io.lakefs.LakeFSFileSystem``, built by ``make
lakefs-hadoopfs``) against ``graveler serve``: Parquet written to ``lakefs://REPO/BRANCH/path``
and read back, in both of its access modes.

* ``presigned``: the FileSystem asks the API for presigned URLs and moves the bytes over
  HTTP itself; no S3 settings at all.
* ``simple`` (direct access): it asks the API where an object lives, writes and reads the
  bytes there with ``s3a://`` (here on moto) and links them through the API.

The server keeps its repositories on moto S3 (``--namespace-root s3://...``), as both modes
need; the same server checks the Python clients' presigned transfers. One Spark driver per
mode, in its own process with the project's pyspark (4.3.0, Hadoop 3.5.0):
tests/iceberg/spark.py's driver, given this suite's jars.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.models import BranchCreation, CommitCreation, RepositoryCreation
from moto.server import ThreadedMotoServer

from tests.iceberg.spark import SparkDriver
from tests.jars import S3A_JARS, jar_paths, lakefs_hadoopfs_jar
from tests.lakefs_clients.server import LakeFS, lakefs_server, unique
from tests.serving import Key, s3a_settings

BUCKET = "lakefs-data"
MOTO_KEY = Key("testing", "testing")
ROWS = 3000
#: The AWS SDK v1 classes the direct mode needs beside Hadoop 3.5's S3A (scripts/jars.txt).
SDK_V1_JARS = ("aws-java-sdk-s3", "aws-java-sdk-core")


@pytest.fixture(scope="module")
def moto() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=url, **MOTO_KEY.boto).create_bucket(Bucket=BUCKET)
    yield url
    server.stop()


@pytest.fixture(scope="module")
def server_s3(
    tmp_path_factory: pytest.TempPathFactory, moto: str, _isolated: None
) -> Iterator[LakeFS]:
    env = {
        "GRAVELER_S3_ENDPOINT_URL": moto,
        "AWS_ACCESS_KEY_ID": MOTO_KEY.access_key_id,
        "AWS_SECRET_ACCESS_KEY": MOTO_KEY.secret_access_key,
        "AWS_REGION": "us-east-1",
    }
    home = tmp_path_factory.mktemp("lakefs-s3") / "home"
    with lakefs_server(home, "--namespace-root", f"s3://{BUCKET}/repos", env=env) as server:
        yield server


@pytest.fixture(scope="module")
def sdk(server_s3: LakeFS) -> LakeFSClient:
    configuration = lakefs_sdk.Configuration(
        host=server_s3.api,
        username=server_s3.key.access_key_id,
        password=server_s3.key.secret_access_key,
    )
    return LakeFSClient(configuration)


@pytest.fixture(scope="module")
def repo(sdk: LakeFSClient) -> str:
    name = unique("spark")
    sdk.repositories_api.create_repository(
        RepositoryCreation(name=name, storage_namespace=f"s3://{BUCKET}/repos/{name}")
    )
    return name


def settings(mode: str, server: LakeFS, moto: str) -> dict[str, str]:
    """Spark settings for lakeFS's FileSystem in ``mode``, as docs/lakefs-clients.md gives."""
    lakefs = {
        "fs.lakefs.impl": "io.lakefs.LakeFSFileSystem",
        "fs.lakefs.endpoint": server.api,
        "fs.lakefs.access.key": server.key.access_key_id,
        "fs.lakefs.secret.key": server.key.secret_access_key,
        "fs.lakefs.access.mode": mode,
        "fs.server.api.retry.max-retries": "1",
    }
    jars = [lakefs_hadoopfs_jar()]
    if mode == "simple":
        lakefs.update(s3a_settings(moto, MOTO_KEY, BUCKET))
        jars += jar_paths(*S3A_JARS, *SDK_V1_JARS)
    return {
        **{f"spark.hadoop.{k}": v for k, v in lakefs.items()},
        "spark.jars": ",".join(jars),
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.driver.memory": "1g",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
        "master": "local[2]",
    }


@pytest.fixture(scope="module", params=["presigned", "simple"])
def spark(request: pytest.FixtureRequest, server_s3: LakeFS, moto: str) -> Iterator[Any]:
    mode: str = request.param
    driver = SparkDriver(
        settings(mode, server_s3, moto), timeout=240, python=Path(sys.executable), iceberg=False
    )
    driver.mode = mode  # type: ignore[attr-defined]
    try:
        yield driver
    finally:
        driver.close()


WRITE = """
df = spark.range(0, {rows}).selectExpr(
    "id", "id * 2 AS twice", "CAST(id % 3 AS STRING) AS part")
df.write.mode("overwrite").partitionBy("part").parquet("{uri}")
back = spark.read.parquet("{uri}")
result = {{
    "count": back.count(),
    "sum": back.agg(F.sum("twice")).first()[0],
    "parts": sorted(r.part for r in back.select("part").distinct().collect()),
}}
"""

LIST = """
path = spark._jvm.org.apache.hadoop.fs.Path("{uri}")
fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
result = sorted(status.getPath().getName() for status in fs.listStatus(path))
"""

READ = """
back = spark.read.parquet("{uri}")
result = {{"count": back.count(), "max": back.agg(F.max("id")).first()[0]}}
"""


def test_parquet_round_trip(spark: Any, sdk: LakeFSClient, repo: str, moto: str) -> None:
    mode = spark.mode
    branch = f"spark-{mode}"
    sdk.branches_api.create_branch(repo, BranchCreation(name=branch, source="main"))
    uri = f"lakefs://{repo}/{branch}/tables/{mode}"
    written = spark.run(WRITE.format(rows=ROWS, uri=uri))
    assert written == {"count": ROWS, "sum": ROWS * (ROWS - 1), "parts": [0, 1, 2]}

    # What Spark left on the branch, seen through the API: the partitions' Parquet files and
    # the _SUCCESS marker, with their bytes in the repository's S3 namespace.
    listed = sdk.objects_api.list_objects(repo, branch, prefix=f"tables/{mode}/").results
    paths = [o.path for o in listed]
    assert f"tables/{mode}/_SUCCESS" in paths
    parquet = [o for o in listed if o.path.endswith(".parquet")]
    assert {o.path.split("/")[2] for o in parquet} == {"part=0", "part=1", "part=2"}
    s3 = boto3.client("s3", endpoint_url=moto, **MOTO_KEY.boto)
    for entry in parquet:
        assert entry.physical_address.startswith(f"s3://{BUCKET}/repos/{repo}/")
        key = entry.physical_address[len(f"s3://{BUCKET}/") :]
        assert s3.head_object(Bucket=BUCKET, Key=key)["ContentLength"] == entry.size_bytes

    commit = sdk.commits_api.commit(repo, branch, CommitCreation(message=f"spark {mode}"))
    at_commit = spark.run(READ.format(uri=f"lakefs://{repo}/{commit.id}/tables/{mode}"))
    assert at_commit == {"count": ROWS, "max": ROWS - 1}


def test_overwrite_and_listing_on_a_branch(spark: Any, sdk: LakeFSClient, repo: str) -> None:
    mode = spark.mode
    branch = f"overwrite-{mode}"
    sdk.branches_api.create_branch(repo, BranchCreation(name=branch, source="main"))
    uri = f"lakefs://{repo}/{branch}/t"
    spark.run(
        f'spark.range(0, 10).write.parquet("{uri}"); '
        f'spark.range(0, 4).write.mode("overwrite").parquet("{uri}"); '
        f'result = spark.read.parquet("{uri}").count()'
    )
    assert spark.run(READ.format(uri=uri)) == {"count": 4, "max": 3}
    names = spark.run(LIST.format(uri=uri))
    assert names.count("_SUCCESS") == 1 and len(names) == 1 + sum(
        n.endswith(".parquet") for n in names
    )
    main = sdk.objects_api.list_objects(repo, "main", prefix="t/").results
    assert main == []  # the branch's writes stay on the branch


def test_presigned_transfers_of_the_python_clients(server_s3: LakeFS, repo: str) -> None:
    """On the same S3-backed server, the ``lakefs`` package and lakefs-spec move bytes through
    presigned URLs, as the server's storage config offers them (``pre_sign_support``)."""
    import lakefs
    from lakefs_spec import LakeFSFileSystem

    client = lakefs.Client(
        host=server_s3.url,
        username=server_s3.key.access_key_id,
        password=server_s3.key.secret_access_key,
    )
    assert client.storage_config.pre_sign_support
    links = _staging_links(server_s3)
    branch = lakefs.Repository(repo, client=client).branch("presigned").create("main")
    data = bytes(range(256)) * 64
    branch.object("py/blob.bin").upload(data=data, pre_sign=True)
    stat = branch.object("py/blob.bin").stat()
    assert stat.physical_address.startswith(f"s3://{BUCKET}/repos/{repo}/")
    assert branch.object("py/blob.bin").reader(pre_sign=True).read() == data

    fs = LakeFSFileSystem(
        host=server_s3.url,
        username=server_s3.key.access_key_id,
        password=server_s3.key.secret_access_key,
        pre_sign=True,
        skip_instance_cache=True,
    )
    fs.pipe(f"lakefs://{repo}/presigned/py/spec.txt", b"through a presigned URL")
    assert fs.cat(f"lakefs://{repo}/presigned/py/spec.txt") == b"through a presigned URL"
    assert fs.info(f"lakefs://{repo}/presigned/py/spec.txt")["size"] == 23
    # both uploads went to S3 directly and were linked through the API afterwards
    assert _staging_links(server_s3) == links + 2


def _staging_links(server: LakeFS) -> int:
    """Physical addresses linked so far (``PUT .../staging/backing`` answered 200)."""
    return sum(
        n
        for call, n in server.tap.checked.items()
        if call.startswith("PUT ") and call.endswith("/staging/backing -> 200")
    )
