"""The logical merge of an Iceberg table whose repository's namespace is on S3 (moto on
loopback): the metadata files are read and checked in the background, and the merged one
is written by the S3 store's writer committed from a background thread."""

from __future__ import annotations

import pytest

from graveler.client import Graveler
from graveler.core.errors import CorruptFile
from graveler.repository import Repository
from graveler.tables.iceberg import GravelerCatalog
from graveler.tables.iceberg.names import POINTER
from tests.iceberg.helpers import SCHEMA, SPEC, content, rows
from tests.objectstore.conftest import aws_env, moto_endpoint, s3_bucket, s3_client

__all__ = ["aws_env", "moto_endpoint", "s3_bucket", "s3_client"]
T = "db/t/"


def forked_on_s3(repo: Repository, endpoint: str) -> GravelerCatalog:
    """``main`` with table ``db.t`` (one append) and branch ``run`` forked from it; the
    catalog's clients write their data files to moto."""
    s3 = {"s3.endpoint": endpoint, "s3.region": "us-east-1"}
    keys = {"s3.access-key-id": "testing", "s3.secret-access-key": "testing"}
    catalog = GravelerCatalog("test", repo, **s3, **keys)
    catalog.create_namespace(("main", "db"))
    catalog.create_table("main.db.t", SCHEMA, partition_spec=SPEC).append(rows([1, 2], 1))
    repo.create_branch("run", "main")
    return catalog


def test_appends_on_both_sides_merge_on_s3(tmp_path, s3_bucket, s3_client, moto_endpoint):
    with Graveler(home=tmp_path / "h", store_options={"endpoint_url": moto_endpoint}) as gv:
        repo = gv.create_repository("lake", f"s3://{s3_bucket}/lakes/lake")
        catalog = forked_on_s3(repo, moto_endpoint)
        catalog.load_table("run.db.t").append(rows([10], 2))
        catalog.load_table("main.db.t").append(rows([20], 1))
        repo.merge("run", "main")
        merged = catalog.load_table("main.db.t")
        assert content(merged) == [(1, 1, "x"), (2, 1, "x"), (10, 2, "x"), (20, 1, "x")]
        pointer = repo.stat("main", T + POINTER)
        key = f"lakes/lake/{pointer.physical_address}"
        stored = s3_client.get_object(Bucket=s3_bucket, Key=key)["Body"].read()
        assert len(stored) == pointer.size and stored == repo.get("main", T + POINTER)


def test_a_damaged_metadata_file_on_s3_fails_the_merge(
    tmp_path, s3_bucket, s3_client, moto_endpoint
):
    with Graveler(home=tmp_path / "h", store_options={"endpoint_url": moto_endpoint}) as gv:
        repo = gv.create_repository("lake", f"s3://{s3_bucket}/lakes/lake")
        catalog = forked_on_s3(repo, moto_endpoint)
        catalog.load_table("run.db.t").append(rows([10], 2))
        catalog.load_table("main.db.t").append(rows([20], 1))
        key = f"lakes/lake/{repo.stat('run', T + POINTER).physical_address}"
        body = s3_client.get_object(Bucket=s3_bucket, Key=key)["Body"].read()
        damaged = bytearray(body)
        damaged[len(damaged) // 2] ^= 0x20
        s3_client.put_object(Bucket=s3_bucket, Key=key, Body=bytes(damaged))
        head = repo.resolve("main").commit.id
        with pytest.raises(CorruptFile, match="SHA-256"):
            repo.merge("run", "main")
        assert repo.resolve("main").commit.id == head
