"""S3 backend against moto on loopback: multipart, prefixes, error translation and retries.

The retry tests put :class:`FlakyProxy` (a loopback HTTP proxy answering ``503 SlowDown``)
between the store and moto. botocore backs off 1 s x 2**attempt (with jitter) on throttling
errors; the tests shrink that base to 10 ms so they stay fast. The retry logic itself is
botocore's, configured by the store.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.retries import standard

from graveler.core.errors import InvalidArgument, InvalidURI, ObjectNotFound, StorageError
from graveler.storage.objectstore import open_object_store
from graveler.storage.objectstore.s3 import S3ObjectStore
from tests.objectstore.helpers import CountingReader, FlakyProxy, ReaderBroke

MiB = 1 << 20


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrink botocore's throttling backoff base from 1 s to 10 ms (test speed only)."""
    config = getattr(standard.ExponentialBackoff, "_DEFAULT_BACKOFF_CONFIG", None)
    if isinstance(config, dict) and "throttling_base_scale" in config:
        monkeypatch.setitem(config, "throttling_base_scale", 0.01)


@pytest.fixture
def proxy(moto_endpoint: str, fast_backoff: None) -> Iterator[FlakyProxy]:
    with FlakyProxy(moto_endpoint, failures=0) as running:
        yield running


def _proxied(proxy: FlakyProxy, bucket: str, max_attempts: int) -> S3ObjectStore:
    return S3ObjectStore(bucket, "p", endpoint_url=proxy.endpoint, max_attempts=max_attempts)


def test_streamed_put_uses_multipart(s3_store: S3ObjectStore, s3_client: Any) -> None:
    data = os.urandom(12 * MiB)
    # a stream that returns short reads (64 KiB, like a socket) must still make 8 MiB parts
    s3_store.put("mp", CountingReader(data, max_chunk=64 * 1024).as_binary())
    head = s3_client.head_object(Bucket=s3_store.bucket, Key="pre/fix/mp")
    assert head["ETag"].strip('"').endswith("-2")  # two parts: 8 MiB + 4 MiB
    assert s3_store.get("mp") == data


def test_failed_multipart_upload_is_aborted(s3_store: S3ObjectStore, s3_client: Any) -> None:
    s3_store.put("k", b"old")
    with pytest.raises(ReaderBroke):
        s3_store.put("k", CountingReader(os.urandom(24 * MiB), fail_after=20).as_binary())
    assert s3_store.get("k") == b"old"
    uploads = s3_client.list_multipart_uploads(Bucket=s3_store.bucket)
    assert uploads.get("Uploads", []) == []


def test_writer_sends_parts_as_they_fill(s3_store: S3ObjectStore, s3_client: Any) -> None:
    data = os.urandom(17 * MiB)
    writer = s3_store.open_writer("mp")
    writer.write(data[: 9 * MiB])  # one full part goes out now, 1 MiB stays buffered
    uploads = s3_client.list_multipart_uploads(Bucket=s3_store.bucket)["Uploads"]
    assert [u["Key"] for u in uploads] == ["pre/fix/mp"]
    assert not s3_store.exists("mp")
    writer.write(data[9 * MiB :])
    writer.commit()
    head = s3_client.head_object(Bucket=s3_store.bucket, Key="pre/fix/mp")
    assert head["ETag"].strip('"').endswith("-3")  # 8 MiB + 8 MiB + 1 MiB
    assert s3_store.get("mp") == data


def test_aborted_writer_aborts_its_multipart_upload(
    s3_store: S3ObjectStore, s3_client: Any
) -> None:
    with pytest.raises(ReaderBroke), s3_store.open_writer("k") as writer:
        writer.write(os.urandom(10 * MiB))
        raise ReaderBroke("the producer broke")
    assert s3_client.list_multipart_uploads(Bucket=s3_store.bucket).get("Uploads", []) == []
    assert not s3_store.exists("k")


def test_prefix_isolates_and_is_stripped(s3_store: S3ObjectStore, s3_client: Any) -> None:
    bucket = s3_store.bucket
    s3_client.put_object(Bucket=bucket, Key="elsewhere/x", Body=b"1")
    s3_client.put_object(Bucket=bucket, Key="pre/fixture", Body=b"1")  # shares the string prefix
    s3_client.put_object(Bucket=bucket, Key="pre/fix/folder/", Body=b"")  # console folder marker
    s3_store.put("mine", b"2")
    assert [info.key for info in s3_store.list()] == ["mine"]
    assert s3_store.uri == f"s3://{bucket}/pre/fix"
    root = S3ObjectStore(bucket, "", endpoint_url=s3_store._endpoint)
    assert root.uri == f"s3://{bucket}"
    assert [i.key for i in root.list()] == ["elsewhere/x", "pre/fix/mine", "pre/fixture"]


def test_missing_bucket_is_a_storage_error_naming_it(moto_endpoint: str, aws_env: None) -> None:
    store = S3ObjectStore("no-such-bucket-here", endpoint_url=moto_endpoint, max_attempts=2)
    with pytest.raises(StorageError, match=r"no-such-bucket-here.*bucket exists"):
        store.get("k")
    with pytest.raises(StorageError, match="no-such-bucket-here"):
        store.put("k", b"v")
    with pytest.raises(StorageError):
        list(store.list())


def test_transient_503s_are_retried(proxy: FlakyProxy, s3_bucket: str) -> None:
    store = _proxied(proxy, s3_bucket, max_attempts=4)
    proxy.reset(failures=2)
    assert store.put("k", b"value").size == 5
    assert (proxy.errors_served, proxy.forwarded) == (2, 1)
    proxy.reset(failures=2)
    assert store.get("k") == b"value"
    assert (proxy.errors_served, proxy.forwarded) == (2, 1)
    proxy.reset(failures=3)
    assert [info.key for info in store.list()] == ["k"]
    assert store.stat("k").size == 5
    assert proxy.errors_served == 3


def test_transient_503s_during_multipart_are_retried(proxy: FlakyProxy, s3_bucket: str) -> None:
    store = _proxied(proxy, s3_bucket, max_attempts=4)
    data = os.urandom(9 * MiB)
    proxy.reset(failures=3)
    store.put("big", CountingReader(data).as_binary())
    assert proxy.errors_served == 3
    proxy.reset(failures=0)
    assert store.get("big") == data


def test_body_cut_off_mid_read_is_re_requested(proxy: FlakyProxy, s3_bucket: str) -> None:
    store = _proxied(proxy, s3_bucket, max_attempts=2)
    data = os.urandom(256 * 1024)
    store.put("k", data)
    proxy.truncate_gets = 2
    assert store.get("k") == data
    assert proxy.truncate_gets == 0
    proxy.truncate_gets = 3  # every attempt breaks: gives up with StorageError
    with pytest.raises(StorageError, match="body"):
        store.read_range("k", 0, 100_000)


def test_permanent_503_gives_up_in_bounded_time(proxy: FlakyProxy, s3_bucket: str) -> None:
    store = _proxied(proxy, s3_bucket, max_attempts=3)
    proxy.reset(failures=None)
    started = time.monotonic()
    with pytest.raises(StorageError) as caught:
        store.put("stuck/key", b"value")
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert f"s3://{s3_bucket}/p/stuck/key" in message
    assert "SlowDown" in message and "3 attempt(s)" in message and "max_attempts" in message
    assert proxy.errors_served == 3
    with pytest.raises(StorageError):
        store.get("stuck/key")
    with pytest.raises(StorageError):
        store.stat("stuck/key")


def test_unreachable_endpoint_is_a_storage_error(aws_env: None) -> None:
    with socket.socket() as sock:  # a loopback port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = S3ObjectStore(
        "some-bucket", endpoint_url=f"http://127.0.0.1:{port}", max_attempts=2, connect_timeout=2
    )
    started = time.monotonic()
    with pytest.raises(StorageError, match=r"some-bucket.*endpoint"):
        store.get("k")
    assert time.monotonic() - started < 10


def test_endpoint_from_environment(
    monkeypatch: pytest.MonkeyPatch, moto_endpoint: str, s3_bucket: str
) -> None:
    monkeypatch.setenv("GRAVELER_S3_ENDPOINT_URL", moto_endpoint)
    store = open_object_store(f"s3://{s3_bucket}/from/env")
    store.put("k", b"v")
    assert store.get("k") == b"v"
    assert store.uri == f"s3://{s3_bucket}/from/env"


def test_not_found_is_object_not_found(s3_store: S3ObjectStore) -> None:
    with pytest.raises(ObjectNotFound, match="'nope'"):
        s3_store.get("nope")


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(InvalidURI):
        S3ObjectStore("ab")  # bucket names need at least 3 characters
    with pytest.raises(InvalidURI):
        S3ObjectStore("Upper-Case")
    with pytest.raises(InvalidURI):
        S3ObjectStore("bucket", "a/../b")
    with pytest.raises(InvalidArgument):
        S3ObjectStore("bucket", max_attempts=0)
    with pytest.raises(InvalidArgument):
        S3ObjectStore("bucket", access_key_id="only-half")


def test_presigned_urls_read_and_write_one_key(s3_store: S3ObjectStore) -> None:
    import requests

    put = requests.put(s3_store.presign("k/one", write=True), data=b"hi", timeout=30)
    assert put.status_code == 200
    assert s3_store.get("k/one") == b"hi"
    assert requests.get(s3_store.presign("k/one"), timeout=30).content == b"hi"


def test_multipart_uploads_by_presigned_parts(s3_store: S3ObjectStore) -> None:
    import requests

    parts = [os.urandom(5 * MiB), b"tail"]
    upload_id = s3_store.create_multipart("k/big")
    etags = []
    for number, data in enumerate(parts, 1):
        url = s3_store.presign_part("k/big", upload_id, number)
        answer = requests.put(url, data=data, timeout=60)
        assert answer.status_code == 200
        etags.append((number, answer.headers["ETag"]))
    info = s3_store.complete_multipart("k/big", upload_id, etags)
    assert info.size == sum(map(len, parts)) and s3_store.get("k/big") == b"".join(parts)
    other = s3_store.create_multipart("k/other")
    s3_store.abort_multipart("k/other", other)
    with pytest.raises((StorageError, ObjectNotFound)):
        s3_store.complete_multipart("k/other", other, [(1, etags[0][1])])
