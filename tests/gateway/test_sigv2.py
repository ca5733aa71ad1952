"""AWS Signature Version 2, signed by boto3's own V2 signers (``signature_version="s3"``,
and ``generate_presigned_url``'s default): in the ``Authorization`` header and in presigned
query strings, with the keys' scopes and the time checks of Version 4.

Reproduced before the fix: every V2 request was refused (403, "this endpoint takes AWS
Signature Version 4 only").
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from email.utils import formatdate
from typing import Any

import botocore.auth
import pytest
from botocore.auth import HmacV1Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from graveler.server import sigv2
from graveler.server.sigv4 import Request, SignatureError
from tests.gateway.conftest import REPO, Gateway, outcome
from tests.serving import Key


def _v2(gateway: Gateway, key: Key | None = None) -> Any:
    return gateway.client(key, signature_version="s3")


def test_header_signed_calls(gateway: Gateway, branch: str):
    client = _v2(gateway)
    key = f"{branch}/v2/a b+c.txt"
    client.put_object(
        Bucket=REPO, Key=key, Body=b"v2", ContentType="text/plain", Metadata={"m": "1, 2"}
    )
    got = client.get_object(Bucket=REPO, Key=key, ResponseContentType="text/x")
    assert got["Body"].read() == b"v2" and got["ContentType"] == "text/x"
    assert got["Metadata"] == {"m": "1, 2"}
    listed = client.list_objects_v2(Bucket=REPO, Prefix=f"{branch}/v2/")["Contents"]
    assert [o["Key"] for o in listed] == [key]
    assert REPO in [b["Name"] for b in client.list_buckets()["Buckets"]]
    client.copy_object(Bucket=REPO, Key=f"{branch}/v2/copy", CopySource=f"{REPO}/{key}")
    upload = client.create_multipart_upload(Bucket=REPO, Key=f"{branch}/v2/mp")["UploadId"]
    part = client.upload_part(
        Bucket=REPO, Key=f"{branch}/v2/mp", UploadId=upload, PartNumber=1, Body=b"part"
    )
    client.complete_multipart_upload(
        Bucket=REPO,
        Key=f"{branch}/v2/mp",
        UploadId=upload,
        MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]},
    )
    client.delete_objects(Bucket=REPO, Delete={"Objects": [{"Key": f"{branch}/v2/copy"}]})
    names = [o["Key"] for o in client.list_objects(Bucket=REPO, Prefix=f"{branch}/v2/")["Contents"]]
    assert names == [key, f"{branch}/v2/mp"]


def test_presigned_urls(gateway: Gateway, branch: str):
    gateway.client().put_object(Bucket=REPO, Key=f"{branch}/p", Body=b"presigned")
    default = gateway.client()  # boto3's default presigner for S3 signs with V2
    url = default.generate_presigned_url(
        "get_object", Params={"Bucket": REPO, "Key": f"{branch}/p"}, ExpiresIn=2
    )
    assert "AWSAccessKeyId=" in url and "Signature=" in url
    with urllib.request.urlopen(url) as answer:
        assert answer.read() == b"presigned"
    tampered = url.replace(f"{branch}/p", f"{branch}/q")
    _refused(tampered, 403, b"SignatureDoesNotMatch")
    time.sleep(3)
    _refused(url, 403, b"Request has expired")
    put_url = _v2(gateway).generate_presigned_url(  # V2 signs the content type: name it
        "put_object",
        Params={"Bucket": REPO, "Key": f"{branch}/up", "ContentType": "text/csv"},
        ExpiresIn=60,
    )
    request = urllib.request.Request(
        put_url, data=b"uploaded", method="PUT", headers={"Content-Type": "text/csv"}
    )
    with urllib.request.urlopen(request) as answer:
        assert answer.status == 200
    assert (
        gateway.client().get_object(Bucket=REPO, Key=f"{branch}/up")["Body"].read() == b"uploaded"
    )


def test_a_presigned_url_may_last_seven_days_at_most(gateway: Gateway, branch: str):
    client = _v2(gateway)
    params = {"Bucket": REPO, "Key": f"{branch}/p"}
    week = client.generate_presigned_url("get_object", Params=params, ExpiresIn=7 * 24 * 3600 + 60)
    _refused(week, 400, b"AuthorizationQueryParametersError")


def _refused(url: str, status: int, text: bytes) -> None:
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(url)
    assert caught.value.code == status
    assert text in caught.value.read()


def test_scopes_apply(gateway: Gateway, branch: str):
    gateway.client().put_object(Bucket=REPO, Key=f"{branch}/r", Body=b"r")
    reader = _v2(gateway, gateway.read_only)
    assert reader.get_object(Bucket=REPO, Key=f"{branch}/r")["Body"].read() == b"r"
    denied = outcome(lambda: reader.put_object(Bucket=REPO, Key=f"{branch}/w", Body=b"w"))
    assert denied == ("error", ("AccessDenied", 403))
    scoped = _v2(gateway, gateway.scoped)
    assert outcome(lambda: scoped.get_object(Bucket=REPO, Key=f"{branch}/r"))[1] == (
        "AccessDenied",
        403,
    )
    unknown = _v2(gateway, Key("GRVLNOSUCHKEY0000000", gateway.key.secret_access_key))
    assert outcome(lambda: unknown.list_buckets()) == ("error", ("InvalidAccessKeyId", 403))
    secret = gateway.key.secret_access_key
    wrong = _v2(
        gateway, Key(gateway.key.access_key_id, secret[:-1] + ("A" if secret[-1] != "A" else "B"))
    )
    assert outcome(lambda: wrong.list_buckets()) == ("error", ("SignatureDoesNotMatch", 403))


@pytest.mark.parametrize(("minutes", "accepted"), [(14, True), (16, False), (-16, False)])
def test_clock_skew(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch, minutes: int, accepted: bool
):
    def skewed(*args: Any, **kwargs: Any) -> str:
        return formatdate(time.time() + minutes * 60, usegmt=True)

    monkeypatch.setattr(botocore.auth, "formatdate", skewed)
    got = outcome(lambda: _v2(gateway).list_buckets())
    assert (got[0] == "ok") is accepted
    if not accepted:
        assert got == ("error", ("RequestTimeTooSkewed", 403))


def _as_received(request: AWSRequest, path: str) -> Request:
    headers = [(k.lower().encode(), str(v).encode()) for k, v in request.headers.items()]
    raw_path, _, query = path.partition("?")
    return Request(request.method, raw_path.encode(), query.encode(), headers)


def test_virtual_host_requests_sign_the_bucket_too():
    """A virtual-host request signs ``/BUCKET/KEY`` though its path is ``/KEY`` (boto3's
    signer, given the path it signs as ``auth_path``, as botocore does for such a URL)."""
    creds = Credentials("GRVLKEY", "secret")
    request = AWSRequest(method="GET", url="http://lake.s3.example.com/main/x.txt?acl")
    request.auth_path = "/lake/main/x.txt"
    HmacV1Auth(creds).add_auth(request)
    signature = sigv2.parse(_as_received(request, "/main/x.txt?acl"), {"acl": ""})
    assert signature is not None
    sigv2.verify(
        _as_received(request, "/main/x.txt?acl"), signature, "secret", bucket_prefix="/lake"
    )
    with pytest.raises(SignatureError, match="does not match"):
        sigv2.verify(_as_received(request, "/main/x.txt?acl"), signature, "secret")
    with pytest.raises(SignatureError, match="does not match"):
        sigv2.verify(
            _as_received(request, "/main/x.txt"), signature, "secret", bucket_prefix="/lake"
        )


def test_v4_still_works_beside_it(gateway: Gateway, branch: str):
    v4 = gateway.client(signature_version="s3v4")
    v4.put_object(Bucket=REPO, Key=f"{branch}/four", Body=b"4")
    assert _v2(gateway).get_object(Bucket=REPO, Key=f"{branch}/four")["Body"].read() == b"4"


def test_an_empty_sub_resource_value_is_signed_as_its_bare_name():
    """minio-go (lakeFS's esti signs with it) sends ``?tagging=`` and signs ``?tagging``, as
    AWS's Version 2 rules give a sub-resource without a value."""
    creds = Credentials("GRVLKEY", "secret")
    request = AWSRequest(method="PUT", url="http://s3.example.com/lake/main/x.txt?tagging")
    HmacV1Auth(creds).add_auth(request)
    received = _as_received(request, "/lake/main/x.txt?tagging=")
    signature = sigv2.parse(received, {"tagging": ""})
    assert signature is not None
    sigv2.verify(received, signature, "secret")
