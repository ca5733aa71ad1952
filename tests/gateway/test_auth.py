"""Who may do what through the gateway: unsigned, unknown, wrongly signed, skewed and expired
requests are refused with S3's codes; keys are limited to repositories, to reads, or may
create repositories; writes go to branches only. Each refusal has a control that passes."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from datetime import timedelta
from typing import Any

import boto3
import botocore.auth
import botocore.crt.auth
import pytest
from botocore import UNSIGNED
from botocore.compat import get_current_datetime
from botocore.config import Config

from graveler.client import Graveler
from graveler.core.errors import RepositoryNotFound
from graveler.server.auth import CACHE_SECONDS
from tests.gateway.conftest import Gateway, outcome
from tests.serving import Key


def _client(gateway: Gateway, key: Key, **config: Any) -> Any:
    return gateway.client(key, **config)


def test_unsigned_requests_are_refused(gateway: Gateway, branch: str):
    anonymous = boto3.client(
        "s3",
        endpoint_url=gateway.server.url,
        region_name="us-east-1",
        config=Config(signature_version=UNSIGNED, retries={"max_attempts": 1}),
    )
    assert outcome(lambda: anonymous.list_buckets()) == ("error", ("AccessDenied", 403))
    assert outcome(lambda: anonymous.get_object(Bucket="lake", Key=f"{branch}/x"))[1] == (
        "AccessDenied",
        403,
    )
    put = outcome(lambda: anonymous.put_object(Bucket="lake", Key=f"{branch}/x", Body=b"1"))
    assert put == ("error", ("AccessDenied", 403))
    assert outcome(lambda: gateway.client().list_buckets())[0] == "ok"  # the control


def test_unknown_key_and_wrong_secret(gateway: Gateway):
    unknown = Key("GRVLNOSUCHKEY0000000", gateway.key.secret_access_key)
    assert outcome(lambda: _client(gateway, unknown).list_buckets()) == (
        "error",
        ("InvalidAccessKeyId", 403),
    )
    secret = gateway.key.secret_access_key
    wrong = Key(gateway.key.access_key_id, secret[:-1] + ("A" if secret[-1] != "A" else "B"))
    assert outcome(lambda: _client(gateway, wrong).list_buckets()) == (
        "error",
        ("SignatureDoesNotMatch", 403),
    )


def test_a_request_changed_after_signing_is_refused(gateway: Gateway, branch: str):
    client = gateway.client()
    client.put_object(Bucket="lake", Key=f"{branch}/a", Body=b"a")
    client.put_object(Bucket="lake", Key=f"{branch}/b", Body=b"b")

    def swap(request: Any, **_: Any) -> None:
        request.url = request.url.replace(f"{branch}/a", f"{branch}/b")

    client.meta.events.register("before-send.s3.GetObject", swap)
    assert outcome(lambda: client.get_object(Bucket="lake", Key=f"{branch}/a")) == (
        "error",
        ("SignatureDoesNotMatch", 403),
    )
    client.meta.events.unregister("before-send.s3.GetObject", swap)
    assert client.get_object(Bucket="lake", Key=f"{branch}/a")["Body"].read() == b"a"


@pytest.mark.parametrize(("minutes", "accepted"), [(14, True), (16, False), (-16, False)])
def test_clock_skew(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch, minutes: int, accepted: bool
):
    skewed = get_current_datetime(remove_tzinfo=False) + timedelta(minutes=minutes)

    def now(remove_tzinfo: bool = True) -> Any:
        return skewed.replace(tzinfo=None) if remove_tzinfo else skewed

    monkeypatch.setattr(botocore.auth, "get_current_datetime", now)
    monkeypatch.setattr(botocore.crt.auth, "get_current_datetime", now)
    got = outcome(lambda: gateway.client().list_buckets())
    assert (got[0] == "ok") is accepted
    if not accepted:
        assert got == ("error", ("RequestTimeTooSkewed", 403))


def test_presigned_urls(gateway: Gateway, branch: str):
    client = gateway.client(signature_version="s3v4")
    client.put_object(Bucket="lake", Key=f"{branch}/p", Body=b"presigned")
    url = client.generate_presigned_url(
        "get_object", Params={"Bucket": "lake", "Key": f"{branch}/p"}, ExpiresIn=2
    )
    with urllib.request.urlopen(url) as r:
        assert r.read() == b"presigned"
    tampered = url.replace("X-Amz-Signature=", "X-Amz-Signature=0")
    with pytest.raises(urllib.error.HTTPError) as bad:
        urllib.request.urlopen(tampered)
    assert bad.value.code == 403 and b"SignatureDoesNotMatch" in bad.value.read()
    time.sleep(3)
    with pytest.raises(urllib.error.HTTPError) as late:
        urllib.request.urlopen(url)
    assert late.value.code == 403 and b"Request has expired" in late.value.read()
    put_url = client.generate_presigned_url(
        "put_object", Params={"Bucket": "lake", "Key": f"{branch}/up"}, ExpiresIn=60
    )
    request = urllib.request.Request(put_url, data=b"unsigned payload", method="PUT")
    with urllib.request.urlopen(request) as r:
        assert r.status == 200
    assert (
        client.get_object(Bucket="lake", Key=f"{branch}/up")["Body"].read() == b"unsigned payload"
    )


def test_read_only_key(gateway: Gateway, branch: str):
    gateway.client().put_object(Bucket="lake", Key=f"{branch}/r", Body=b"r")
    reader = gateway.client(gateway.read_only)
    assert reader.get_object(Bucket="lake", Key=f"{branch}/r")["Body"].read() == b"r"
    for call in (
        lambda: reader.put_object(Bucket="lake", Key=f"{branch}/w", Body=b"w"),
        lambda: reader.delete_object(Bucket="lake", Key=f"{branch}/r"),
        lambda: reader.create_multipart_upload(Bucket="lake", Key=f"{branch}/m"),
        lambda: reader.copy_object(Bucket="lake", Key=f"{branch}/c", CopySource=f"lake/{branch}/r"),
    ):
        assert outcome(call) == ("error", ("AccessDenied", 403))
    assert reader.get_object(Bucket="lake", Key=f"{branch}/r")["Body"].read() == b"r"


def test_key_limited_to_a_repository(gateway: Gateway, branch: str):
    scoped = gateway.client(gateway.scoped)
    assert [b["Name"] for b in scoped.list_buckets()["Buckets"]] == ["other"]
    assert {"lake", "other"} <= {b["Name"] for b in gateway.client().list_buckets()["Buckets"]}
    assert outcome(lambda: scoped.list_objects_v2(Bucket="lake", Prefix="main/"))[1] == (
        "AccessDenied",
        403,
    )
    assert outcome(lambda: scoped.head_bucket(Bucket="lake"))[1] == ("403", 403)
    scoped.put_object(Bucket="other", Key="main/mine", Body=b"ok")
    assert scoped.get_object(Bucket="other", Key="main/mine")["Body"].read() == b"ok"
    gateway.client().put_object(Bucket="lake", Key=f"{branch}/secret", Body=b"s")
    copy = outcome(
        lambda: scoped.copy_object(
            Bucket="other", Key="main/stolen", CopySource=f"lake/{branch}/secret"
        )
    )
    assert copy == ("error", ("AccessDenied", 403))


def test_create_bucket_needs_an_admin_key(gateway: Gateway, engine: Graveler, tmp_path: Any):
    assert outcome(lambda: gateway.client().create_bucket(Bucket="newrepo"))[1] == (
        "AccessDenied",
        403,
    )
    admin = gateway.client(gateway.admin)
    admin.create_bucket(Bucket="newrepo")
    assert engine.repository("newrepo").info.default_branch == "main"
    assert outcome(lambda: admin.create_bucket(Bucket="newrepo"))[1] == (
        "BucketAlreadyOwnedByYou",
        409,
    )
    admin.put_object(Bucket="newrepo", Key="main/first", Body=b"1")
    root = (gateway.server.home / "data").as_uri()
    place = {"where": f"{root}/custom/placed"}
    admin.meta.events.register(
        "before-sign.s3.CreateBucket",
        lambda request, **_: request.headers.__setitem__(
            "x-graveler-storage-namespace", place["where"]
        ),
    )
    admin.create_bucket(Bucket="placed")
    assert engine.repository("placed").info.storage_namespace == place["where"]
    for outside in ((tmp_path / "elsewhere").as_uri(), f"{root}/../../escaped"):
        place["where"] = outside
        refused = outcome(lambda: admin.create_bucket(Bucket="outside"))
        assert refused == ("error", ("AccessDenied", 403)), outside
    with pytest.raises(RepositoryNotFound):
        engine.repository("outside")


def test_bucket_names_and_deletes_answer_as_s3(gateway: Gateway):
    """A name S3 would refuse is InvalidBucketName; DeleteBucket of a bucket that does not
    exist is NoSuchBucket (of one that does, NotImplemented: repositories are deleted with
    the CLI)."""
    admin = gateway.client(gateway.admin)
    for bad in ("ab", "-leading-hyphen", "x" * 64):
        assert outcome(lambda b=bad: admin.create_bucket(Bucket=b))[1] == (
            "InvalidBucketName",
            400,
        ), bad
    assert outcome(lambda: admin.delete_bucket(Bucket="no-such-repo"))[1] == ("NoSuchBucket", 404)
    assert outcome(lambda: admin.delete_bucket(Bucket="lake"))[1] == ("NotImplemented", 501)


def test_writes_go_to_branches_only(gateway: Gateway, engine: Graveler, branch: str):
    repo = engine.repository("lake")
    client = gateway.client()
    client.put_object(Bucket="lake", Key=f"{branch}/x", Body=b"x")
    commit = repo.commit(branch, "for refs")
    repo.create_tag(f"{branch}-v1", commit.id)
    for ref in (f"{branch}-v1", commit.id, commit.id[:10], f"{branch}~1", f"{branch}@"):
        got = outcome(lambda r=ref: client.put_object(Bucket="lake", Key=f"{r}/y", Body=b"y"))
        assert got == ("error", ("MethodNotAllowed", 405)), ref
        gone = outcome(lambda r=ref: client.delete_object(Bucket="lake", Key=f"{r}/x"))
        assert gone == ("error", ("MethodNotAllowed", 405)), ref
    assert (
        outcome(lambda: client.put_object(Bucket="lake", Key="no-such-branch/y", Body=b"y"))[1][1]
        == 404
    )
    protected = f"{branch}-p"
    repo.create_branch(protected, branch)
    repo.protect_branch(protected)
    assert outcome(lambda: client.put_object(Bucket="lake", Key=f"{protected}/y", Body=b"y")) == (
        "error",
        ("AccessDenied", 403),
    )
    assert client.get_object(Bucket="lake", Key=f"{protected}/x")["Body"].read() == b"x"


def test_a_deleted_key_stops_working(gateway: Gateway):
    key = gateway.server.credentials()
    client = gateway.client(key)
    assert outcome(lambda: client.list_buckets())[0] == "ok"
    gateway.server.cli("credentials", "delete", key.access_key_id)
    time.sleep(CACHE_SECONDS + 0.5)
    assert outcome(lambda: client.list_buckets()) == ("error", ("InvalidAccessKeyId", 403))


def test_secrets_are_never_stored_or_listed_in_the_clear(gateway: Gateway):
    listing = gateway.server.cli("--json", "credentials", "list").stdout
    assert gateway.key.access_key_id in listing
    assert gateway.key.secret_access_key not in listing
    database = (gateway.server.home / "graveler.db").read_bytes()
    wal = gateway.server.home / "graveler.db-wal"
    stored = database + (wal.read_bytes() if wal.exists() else b"")
    assert gateway.key.access_key_id.encode() in stored  # the check reads the right file
    assert gateway.key.secret_access_key.encode() not in stored


def test_virtual_host_addressing(tmp_path: Any):
    """With --domain, REPO.DOMAIN addresses the repository (sent to 127.0.0.1 with that Host)."""
    import http.client
    from urllib.parse import urlsplit

    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    home = tmp_path / "home"
    from tests.serving import Served

    with Served(home, None, "--domain", "s3.graveler.test") as server:
        server.repository("lake", (tmp_path / "ns").as_uri())
        key = server.credentials()
        port = urlsplit(server.url).port
        for method, path, body in (("PUT", "/main/v.txt", b"virtual"), ("GET", "/main/v.txt", b"")):
            request = AWSRequest(
                method=method, url=f"http://lake.s3.graveler.test:{port}{path}", data=body
            )
            S3SigV4Auth(
                Credentials(key.access_key_id, key.secret_access_key), "s3", "us-east-1"
            ).add_auth(request)
            conn = http.client.HTTPConnection("127.0.0.1", port)
            headers = {**dict(request.headers.items()), "Host": f"lake.s3.graveler.test:{port}"}
            conn.request(method, path, body=body or None, headers=headers)
            answer = conn.getresponse()
            assert answer.status == 200, answer.read()
            data = answer.read()
        assert data == b"virtual"
        path_style = gateway_client_for(server, key)
        assert path_style.get_object(Bucket="lake", Key="main/v.txt")["Body"].read() == b"virtual"


def gateway_client_for(server: Any, key: Key) -> Any:
    return boto3.client("s3", endpoint_url=server.url, **key.boto)
