"""The filesystem over an S3 namespace (moto on 127.0.0.1): streamed multipart writes, ranged
reads, and an aborted write that leaves neither an object nor an open multipart upload."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
from graveler_fsspec import GravelerFileSystem

from tests.objectstore.conftest import aws_env, moto_endpoint, s3_bucket, s3_client  # noqa: F401

MIB = 1 << 20


@pytest.fixture
def s3_fs(tmp_path, moto_endpoint: str, s3_bucket: str) -> Iterator[GravelerFileSystem]:  # noqa: F811
    fs = GravelerFileSystem(
        home=str(tmp_path / "home"),
        database_url=f"sqlite:///{tmp_path}/refs.db",
        store_options={"endpoint_url": moto_endpoint, "max_attempts": 2},
        skip_instance_cache=True,
    )
    fs.client.create_repository("lake", f"s3://{s3_bucket}/ns")
    yield fs
    fs.client.close()


def objects(client: Any, bucket: str) -> list[str]:
    listing = client.list_objects_v2(Bucket=bucket, Prefix="ns/data/")
    return [o["Key"] for o in listing.get("Contents", [])]


def test_streamed_multipart_write_and_ranged_reads(s3_fs, s3_client, s3_bucket):  # noqa: F811
    parts = [bytes([i]) * (3 * MIB + 11) for i in range(4)]  # 12 MiB: multipart on S3
    with s3_fs.open("lake/main/big.bin", "wb", block_size=2 * MIB) as f:
        for part in parts:
            f.write(part)
    body = b"".join(parts)
    info = s3_fs.info("lake/main/big.bin")
    assert info["size"] == len(body) and info["checksum"] == hashlib.sha256(body).hexdigest()
    assert s3_fs.cat_file("lake/main/big.bin", 9 * MIB, 9 * MIB + 10) == body[9 * MIB :][:10]
    with s3_fs.open("lake/main/big.bin", "rb", block_size=MIB) as f:
        f.seek(len(body) - 5)
        assert f.read() == body[-5:]
    assert len(objects(s3_client, s3_bucket)) == 1


def test_aborted_write_leaves_nothing_on_s3(s3_fs, s3_client, s3_bucket):  # noqa: F811
    target = "lake/main/aborted.bin"
    with pytest.raises(OSError, match="disk on fire"), s3_fs.open(target, "wb") as f:
        for _ in range(12):
            f.write(b"q" * MIB)
        raise OSError("disk on fire")
    assert not s3_fs.exists(target) and objects(s3_client, s3_bucket) == []
    assert s3_client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads", []) == []
