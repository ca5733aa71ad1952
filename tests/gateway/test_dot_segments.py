"""Keys whose path has a ``.`` or ``..`` segment are refused on every S3 write (PutObject,
CopyObject, CreateMultipartUpload) with an error naming the key, and nothing is staged;
such keys stored by an older version stay readable and deletable.

Reproduced before the fix: ``main/../x.txt`` was staged as ``../x.txt`` on ``main``, and
``etl-1/../main/x.txt`` stayed on ``etl-1`` as ``../main/x.txt``.
"""

from __future__ import annotations

import pytest

from graveler.client import Graveler
from graveler.storage.entry import ObjectEntry
from tests.gateway.conftest import REPO, Gateway, outcome


def _refused(call: object) -> str:
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as caught:
        call()  # type: ignore[operator]
    error = caught.value.response["Error"]
    assert (error["Code"], caught.value.response["ResponseMetadata"]["HTTPStatusCode"]) == (
        "InvalidArgument",
        400,
    )
    return str(error["Message"])


@pytest.mark.parametrize("path", ["../x.txt", "a/../x.txt", "./x.txt", "a/./x.txt", "a/.."])
def test_writes_refuse_dot_segments(gateway: Gateway, engine: Graveler, branch: str, path: str):
    client = gateway.client()
    client.put_object(Bucket=REPO, Key=f"{branch}/src.txt", Body=b"source")
    key = f"{branch}/{path}"
    message = _refused(lambda: client.put_object(Bucket=REPO, Key=key, Body=b"x"))
    assert repr(path) in message and "segment" in message
    _refused(
        lambda: client.copy_object(Bucket=REPO, Key=key, CopySource=f"{REPO}/{branch}/src.txt")
    )
    _refused(lambda: client.create_multipart_upload(Bucket=REPO, Key=key))
    staged = [d.path for d in engine.repository(REPO).diff_uncommitted(branch)]
    assert staged == ["src.txt"]


def test_a_key_cannot_leave_its_branch(gateway: Gateway, engine: Graveler, branch: str):
    client = gateway.client()
    _refused(lambda: client.put_object(Bucket=REPO, Key=f"{branch}/../main/x.txt", Body=b"x"))
    repo = engine.repository(REPO)
    assert list(repo.diff_uncommitted(branch)) == []
    assert not repo.exists("main", "x.txt")


def test_dots_inside_names_are_written(gateway: Gateway, branch: str):
    client = gateway.client()
    for path in ("a..b/x.txt", ".hidden/x", "x."):
        client.put_object(Bucket=REPO, Key=f"{branch}/{path}", Body=b"fine")
        assert client.get_object(Bucket=REPO, Key=f"{branch}/{path}")["Body"].read() == b"fine"


def test_keys_stored_earlier_are_read_and_deleted(gateway: Gateway, engine: Graveler, branch: str):
    repo = engine.repository(REPO)
    stored = repo.put(branch, "placeholder", b"old bytes")
    old = ObjectEntry("../old.txt", stored.physical_address, 9, stored.checksum, stored.mtime)
    repo.staging.stage(repo.name, branch, [old.to_staged()])  # as an older version staged it
    client = gateway.client()
    key = f"{branch}/../old.txt"
    assert client.get_object(Bucket=REPO, Key=key)["Body"].read() == b"old bytes"
    listed = client.list_objects_v2(Bucket=REPO, Prefix=f"{branch}/")["Contents"]
    assert key in [o["Key"] for o in listed]
    client.delete_object(Bucket=REPO, Key=key)
    assert outcome(lambda: client.head_object(Bucket=REPO, Key=key)) == ("error", ("404", 404))
