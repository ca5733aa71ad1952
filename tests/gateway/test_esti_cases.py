"""What lakeFS's own system tests (esti, run whole by tests/lakefs_clients/test_esti.py) found
in the S3 gateway, each pinned here with boto3: conditions that S3 and lakeFS honour, and
ListBuckets' ``prefix``."""

from __future__ import annotations

import uuid
from typing import Any

from graveler.client import Graveler
from tests.gateway.conftest import REPO, Gateway, outcome


def _with_header(client: Any, operation: str, name: str, value: str) -> Any:
    """``client`` sending ``name: value`` on ``operation`` (an empty value included)."""

    def add(request: Any, **_: Any) -> None:
        request.headers[name] = value

    client.meta.events.register(f"before-sign.s3.{operation}", add)
    return client


def test_list_buckets_by_prefix(gateway: Gateway, engine: Graveler) -> None:
    stem = f"pfx-{uuid.uuid4().hex[:8]}"
    for name in (f"{stem}-first", f"{stem}-second"):
        engine.create_repository(name)
    client = gateway.client()
    names = [b["Name"] for b in client.list_buckets(Prefix=stem)["Buckets"]]
    assert names == [f"{stem}-first", f"{stem}-second"]
    second = client.list_buckets(Prefix=f"{stem}-second")["Buckets"]
    assert [b["Name"] for b in second] == [f"{stem}-second"]
    assert REPO in [b["Name"] for b in client.list_buckets()["Buckets"]]


def test_an_empty_if_none_match_is_no_condition(gateway: Gateway, branch: str) -> None:
    """Go's S3 SDK sends ``If-None-Match:`` with no value when a caller sets none."""
    client = _with_header(gateway.client(), "PutObject", "If-None-Match", "")
    for body in (b"one", b"two"):
        client.put_object(Bucket=REPO, Key=f"{branch}/empty-cond", Body=body)
    got = gateway.client().get_object(Bucket=REPO, Key=f"{branch}/empty-cond")
    assert got["Body"].read() == b"two"


def test_complete_multipart_upload_if_none_match(gateway: Gateway, branch: str) -> None:
    """``If-None-Match: *`` on CompleteMultipartUpload refuses to replace an object (412),
    and leaves the upload to be completed or aborted."""
    client = gateway.client()
    key = f"{branch}/mp-cond"
    client.put_object(Bucket=REPO, Key=key, Body=b"already here")
    upload = client.create_multipart_upload(Bucket=REPO, Key=key)["UploadId"]
    part = client.upload_part(Bucket=REPO, Key=key, UploadId=upload, PartNumber=1, Body=b"p")
    parts = {"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]}

    def complete(**condition: str) -> Any:
        return client.complete_multipart_upload(
            Bucket=REPO, Key=key, UploadId=upload, MultipartUpload=parts, **condition
        )

    assert outcome(lambda: complete(IfNoneMatch="*")) == ("error", ("PreconditionFailed", 412))
    assert client.get_object(Bucket=REPO, Key=key)["Body"].read() == b"already here"
    complete()
    assert client.get_object(Bucket=REPO, Key=key)["Body"].read() == b"p"
