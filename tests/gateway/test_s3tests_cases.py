"""Cases of ceph's s3-tests that a plain S3 server passes, run through boto3 against graveler
and moto side by side (docs/s3-gateway.md, "ceph's s3-tests"), and what graveler answers
for S3's versioning and object lock, which it leaves out.

Reproduced before the fix (s3-tests at 8f0ae7b): ``test_bucket_list_prefix_unreadable``
(ListObjects answered the prefix ``\\x0a`` URL-encoded, which SDKs do not decode in V1
answers), ``test_bucket_list_return_data`` (GetObjectAcl, which gives the owner to compare a
listing with, was NotImplemented) and ``test_object_copy_not_owned_object_bucket``
(PutObjectAcl and PutBucketAcl, with which the owner grants the second key access, were
NotImplemented) failed.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.gateway.conftest import REPO, Gateway, Twin, outcome

OWNER = {"ID": "graveler", "DisplayName": "graveler"}


@pytest.mark.parametrize("version", [1, 2])
def test_bucket_list_prefix_unreadable(twin: Twin, version: int):
    """A prefix that is an unprintable character comes back as given, with nothing under
    it (s3-tests: test_bucket_list_prefix_unreadable and its V2 twin)."""
    got = []
    for client, bucket in twin.both():
        for path in ("foo/bar", "foo/baz", "quux"):
            client.put_object(Bucket=bucket, Key=twin.key(path), Body=b"x")
        lister = client.list_objects if version == 1 else client.list_objects_v2
        answer = lister(Bucket=bucket, Prefix=twin.key("\x0a"))
        got.append((answer["Prefix"], answer.get("Contents", []), answer.get("CommonPrefixes", [])))
    assert got[0] == got[1] == (twin.key("\x0a"), [], [])


def test_bucket_list_return_data(twin: Twin):
    """Each listed object's ETag, size, LastModified and owner are what HeadObject and
    GetObjectAcl say of it (s3-tests: test_bucket_list_return_data)."""
    for client, bucket in twin.both():
        names = [twin.key(n) for n in ("bar", "baz", "foo")]
        for name in names:
            client.put_object(Bucket=bucket, Key=name, Body=name.encode())
        listed = client.list_objects(Bucket=bucket, Prefix=twin.key(""))["Contents"]
        assert [o["Key"] for o in listed] == names
        for obj in listed:
            head = client.head_object(Bucket=bucket, Key=obj["Key"])
            owner = client.get_object_acl(Bucket=bucket, Key=obj["Key"])["Owner"]
            assert obj["ETag"] == head["ETag"] and obj["Size"] == head["ContentLength"]
            assert obj["Owner"] == {k: owner[k] for k in ("DisplayName", "ID")}
            assert obj["LastModified"].replace(microsecond=0) == head["LastModified"]
    got = twin.gv.get_object_acl(Bucket=REPO, Key=twin.key("bar"))
    assert got["Owner"] == OWNER
    assert got["Grants"] == [
        {"Grantee": {**OWNER, "Type": "CanonicalUser"}, "Permission": "FULL_CONTROL"}
    ]


def _grant_full_control(client: Any, bucket: str, key: str) -> None:
    """What s3-tests does to give a second user access: the object's and the bucket's ACL,
    read, a FULL_CONTROL grant added (here to graveler's one owner), written back."""
    grant = {"Grantee": {"ID": OWNER["ID"], "Type": "CanonicalUser"}, "Permission": "FULL_CONTROL"}
    acl = client.get_object_acl(Bucket=bucket, Key=key)
    policy = {"Grants": [*acl["Grants"], grant], "Owner": acl["Owner"]}
    client.put_object_acl(Bucket=bucket, Key=key, AccessControlPolicy=policy)
    acl = client.get_bucket_acl(Bucket=bucket)
    policy = {"Grants": [*acl["Grants"], grant], "Owner": acl["Owner"]}
    client.put_bucket_acl(Bucket=bucket, AccessControlPolicy=policy)


def test_object_copy_not_owned_object_bucket(gateway: Gateway, branch: str):
    """The owner grants access, then a second key with access to both repositories reads
    the object and copies it, within the repository and into the other one (s3-tests:
    test_object_copy_not_owned_object_bucket)."""
    owner = gateway.client()
    key = f"{branch}/foo123bar"
    owner.put_object(Bucket=REPO, Key=key, Body=b"foo")
    _grant_full_control(owner, REPO, key)
    second = gateway.client(gateway.server.key(repositories=(REPO, "other")))
    assert second.get_object(Bucket=REPO, Key=key)["Body"].read() == b"foo"
    second.copy({"Bucket": REPO, "Key": key}, REPO, f"{branch}/bar321foo")
    second.copy({"Bucket": REPO, "Key": key}, "other", f"main/{branch}-bar321foo")
    assert owner.get_object(Bucket=REPO, Key=f"{branch}/bar321foo")["Body"].read() == b"foo"
    assert owner.get_object(Bucket="other", Key=f"main/{branch}-bar321foo")["Body"].read() == b"foo"


def test_the_same_on_moto(twin: Twin):
    key = twin.key("foo123bar")
    twin.s3.put_object(Bucket=twin.s3_bucket, Key=key, Body=b"foo")
    _grant_full_control(twin.s3, twin.s3_bucket, key)
    twin.s3.copy({"Bucket": twin.s3_bucket, "Key": key}, twin.s3_bucket, twin.key("bar321foo"))


def test_acls_that_keys_do_not_enforce_are_refused(gateway: Gateway, branch: str):
    client = gateway.client()
    key = f"{branch}/acl"
    client.put_object(Bucket=REPO, Key=key, Body=b"x")
    stranger = {"Grantee": {"ID": "someone-else", "Type": "CanonicalUser"}, "Permission": "READ"}
    policy = {"Grants": [stranger], "Owner": OWNER}
    calls = [
        lambda: client.put_object_acl(Bucket=REPO, Key=key, ACL="public-read"),
        lambda: client.put_object_acl(Bucket=REPO, Key=key, AccessControlPolicy=policy),
        lambda: client.put_bucket_acl(
            Bucket=REPO, GrantRead='uri="http://acs.amazonaws.com/groups/global/AllUsers"'
        ),
    ]
    for call in calls:
        assert outcome(call) == ("error", ("NotImplemented", 501))
    client.put_object_acl(Bucket=REPO, Key=key, ACL="private")  # the one ACL there is
    reader = gateway.client(gateway.read_only)
    assert outcome(lambda: reader.put_object_acl(Bucket=REPO, Key=key, ACL="private")) == (
        "error",
        ("AccessDenied", 403),
    )


VERSIONING_AND_LOCKS = {
    "PutBucketVersioning": lambda c, b, k: c.put_bucket_versioning(
        Bucket=b, VersioningConfiguration={"Status": "Enabled"}
    ),
    "ListObjectVersions": lambda c, b, k: c.list_object_versions(Bucket=b),
    "PutObjectLockConfiguration": lambda c, b, k: c.put_object_lock_configuration(
        Bucket=b, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"}
    ),
    "GetObjectLockConfiguration": lambda c, b, k: c.get_object_lock_configuration(Bucket=b),
    "PutObjectRetention": lambda c, b, k: c.put_object_retention(
        Bucket=b, Key=k, Retention={"Mode": "GOVERNANCE", "RetainUntilDate": "2030-01-01"}
    ),
    "GetObjectRetention": lambda c, b, k: c.get_object_retention(Bucket=b, Key=k),
    "PutObjectLegalHold": lambda c, b, k: c.put_object_legal_hold(
        Bucket=b, Key=k, LegalHold={"Status": "ON"}
    ),
    "GetObjectLegalHold": lambda c, b, k: c.get_object_legal_hold(Bucket=b, Key=k),
}


@pytest.mark.parametrize("operation", VERSIONING_AND_LOCKS)
def test_versioning_and_object_lock_point_to_history(gateway: Gateway, branch: str, operation: str):
    client = gateway.client()
    key = f"{branch}/kept"
    client.put_object(Bucket=REPO, Key=key, Body=b"x")
    with pytest.raises(ClientError) as caught:
        VERSIONING_AND_LOCKS[operation](client, REPO, key)
    error = caught.value.response["Error"]
    assert (error["Code"], caught.value.response["ResponseMetadata"]["HTTPStatusCode"]) == (
        "NotImplemented",
        501,
    )
    assert all(word in error["Message"] for word in ("commit", "branch", "tag"))
    assert client.get_bucket_versioning(Bucket=REPO).get("Status") is None


def test_a_version_id_other_than_null_is_refused(gateway: Gateway, branch: str):
    client = gateway.client()
    key = f"{branch}/v"
    client.put_object(Bucket=REPO, Key=key, Body=b"x")
    assert client.get_object(Bucket=REPO, Key=key, VersionId="null")["Body"].read() == b"x"
    assert outcome(lambda: client.get_object(Bucket=REPO, Key=key, VersionId="3HL4kqtJlcpXro")) == (
        "error",
        ("InvalidArgument", 400),
    )
