"""What lakeFS's own system tests (esti, run whole by tests/lakefs_clients/test_esti.py) found,
each pinned here on its own: lakeFS's status codes and exact messages where its clients print
or match them, and the semantics its tests rely on."""

from __future__ import annotations

import os
import re

import boto3

from tests.lakefs_api.conftest import BUCKET, Api, Server, error_of, unique, upload


def objects(repo: str, branch: str) -> str:
    return f"/repositories/{repo}/branches/{branch}/objects"


def test_deleting_a_missing_object_is_204(api: Api, repo: str, branch: str) -> None:
    """lakeFS deletes idempotently: an object already deleted, or never written, is a 204;
    a missing branch stays a 404."""
    upload(api, repo, branch, "gone/once", b"1")
    for _ in range(2):
        assert api.delete(objects(repo, branch), params={"path": "gone/once"}).status_code == 204
    assert api.delete(objects(repo, branch), params={"path": "never/was"}).status_code == 204
    missing = api.delete(objects(repo, "nowhere"), params={"path": "gone/once"})
    error_of(missing, 404)


def test_a_shallow_copy_is_501(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "shallow/src", b"bytes")
    response = api.post(
        objects(repo, branch) + "/copy",
        params={"dest_path": "shallow/dst"},
        json={"src_path": "shallow/src", "shallow": True},
    )
    assert "not implemented" in error_of(response, 501)
    error_of(api.get(f"/repositories/{repo}/refs/{branch}/objects/stat?path=shallow/dst"), 404)


def test_an_empty_path_parameter_is_400_and_a_trailing_one_404(api: Api, repo: str) -> None:
    """lakeFS refuses a path parameter left empty inside the path, and finds no operation
    for one left empty at its end (``.../pmpu/`` with no upload ID)."""
    pmpu = "/repositories/{}/branches/main/staging/pmpu"
    empty_repo = api.post(pmpu.format(""), params={"path": "x"}, validate=False)
    assert "repository" in error_of(empty_repo, 400)
    empty_branch = api.get(f"/repositories/{repo}/branches/", validate=False)
    assert error_of(empty_branch, 404) == "invalid API endpoint"
    no_upload = api.delete(pmpu.format(repo) + "/", params={"path": "x"}, validate=False)
    assert error_of(no_upload, 404) == "invalid API endpoint"
    refs = api.get(f"/repositories/{repo}/refs//objects/ls", validate=False)
    assert "ref" in error_of(refs, 400)


def test_presigned_multipart_calls_need_a_path(api: Api, s3_repo: str) -> None:
    base = f"/repositories/{s3_repo}/branches/main/staging/pmpu"
    made = api.ok("POST", base, 201, params={"path": "mp/obj", "parts": "1"})
    url = f"{base}/{made['upload_id']}"
    body = {"physical_address": made["physical_address"]}
    error_of(api.delete(url, params={"path": ""}, json=body), 400)
    parts = {**body, "parts": [{"etag": "e", "part_number": 1}]}
    error_of(api.put(url, params={"path": ""}, json=parts), 400)
    assert api.delete(url, params={"path": "mp/obj"}, json=body).status_code == 204


def test_a_link_without_content_type_is_octet_stream(
    server: Server, api: Api, s3_repo: str
) -> None:
    """lakeFS gives a linked object without a ``content_type`` the default type, whatever
    its name's extension."""
    backing = f"/repositories/{s3_repo}/branches/main/staging/backing"
    address = api.ok("GET", backing, params={"path": "linked/a.txt"})["physical_address"]
    s3 = boto3.client("s3", endpoint_url=server.moto_url)
    etag = s3.put_object(Bucket=BUCKET, Key=address[len(f"s3://{BUCKET}/") :], Body=b"hi")["ETag"]
    body = {"staging": {"physical_address": address}, "checksum": etag, "size_bytes": 2}
    linked = api.put(backing, params={"path": "linked/a.txt"}, json=body)
    assert linked.status_code == 200, linked.text
    assert linked.json()["content_type"] == "application/octet-stream"


def test_commit_messages_as_lakefs_takes_them(api: Api, repo: str, branch: str) -> None:
    """Any message is a commit's (lakectl sends " " for ``--allow-empty-message``); nothing to
    commit is lakeFS's ``commit: no changes``."""
    base = f"/repositories/{repo}/branches/{branch}/commits"
    upload(api, repo, branch, "msg/a", b"a")
    made = api.ok("POST", base, 201, json={"message": " "})
    assert made["message"] == " "
    assert error_of(api.post(base, json={"message": "again"}), 400) == "commit: no changes"


def test_lakefs_messages_for_what_is_missing(server: Server, api: Api, repo: str) -> None:
    """lakectl prints these as they are (esti's golden files hold them)."""
    assert error_of(api.get(f"/repositories/{unique()}"), 404) == "repository not found"
    listing = api.get(f"/repositories/{repo}/refs/bad_ref/objects/ls")
    assert error_of(listing, 404) == "commit not found"
    wrong = Api(server.base, api.spec, (server.admin.access_key_id, "not-the-secret"))
    assert error_of(wrong.get("/repositories"), 401) == "error authenticating request"


def test_presigned_urls_are_signed_with_sigv4(api: Api, s3_repo: str) -> None:
    """lakeFS presigns with Signature Version 4 (esti looks for ``X-Amz-Signature``)."""
    upload(api, s3_repo, "main", "signed/a", b"a")
    stat = f"/repositories/{s3_repo}/refs/main/objects/stat"
    url = api.ok("GET", stat, params={"path": "signed/a", "presign": "true"})["physical_address"]
    assert "X-Amz-Signature=" in url and "X-Amz-Algorithm=AWS4-HMAC-SHA256" in url, url


def test_physical_addresses_have_lakefs_shape(api: Api, repo: str, branch: str) -> None:
    """``data/`` and two names of 20 base32hex characters: lakectl's and esti's tools know an
    object's address by that shape."""
    upload(api, repo, branch, "shape/a", b"a")
    stat = f"/repositories/{repo}/refs/{branch}/objects/stat"
    address = api.ok("GET", stat, params={"path": "shape/a"})["physical_address"]
    assert re.search(r"/data/[0-9a-v]{20}/[0-9a-v]{20}$", address), address


def test_the_first_commit_has_no_committer(api: Api) -> None:
    name = unique()
    body = {"name": name, "storage_namespace": f"local://{name}"}
    api.ok("POST", "/repositories", 201, json=body)
    first = api.ok("GET", f"/repositories/{name}/refs/main/commits")["results"][-1]
    assert first["message"] == "Repository created" and first["committer"] == ""


def test_an_import_without_a_message_is_lakefs_import_objects(
    server: Server, api: Api, repo: str, branch: str
) -> None:
    """lakectl's ``import`` sends no message unless given one; lakeFS commits it as
    ``Import objects``."""
    from tests.lakefs_api.test_imports import prefix, wait

    key = f"{unique('imp')}/a.csv"
    boto3.client("s3", endpoint_url=server.moto_url).put_object(Bucket=BUCKET, Key=key, Body=b"a")
    body = {"paths": [prefix(f"s3://{BUCKET}/{key.split('/')[0]}/", "in/")], "commit": {}}
    started = api.post(f"/repositories/{repo}/branches/{branch}/import", json=body)
    assert started.status_code == 202, started.text
    done = wait(api, repo, branch, started.json()["id"])
    assert done["completed"] and done["commit"]["message"] == "Import objects", done


def test_a_cherry_pick_conflict_is_lakefs_conflict_found(api: Api, repo: str) -> None:
    branches = f"/repositories/{repo}/branches"
    left, right = unique("left"), unique("right")
    for name in (left, right):
        api.ok("POST", branches, 201, json={"name": name, "source": "main"})
        upload(api, repo, name, "both/x", name.encode())
        api.ok("POST", f"{branches}/{name}/commits", 201, json={"message": name})
    picked = api.post(f"{branches}/{right}/cherry-pick", json={"ref": left})
    assert error_of(picked, 409) == "update branch: conflict found"


def test_upload_part_copy_of_a_range_on_an_s3_namespace(server: Server, s3_repo: str) -> None:
    """The S3 gateway (same port) copies a byte range of an object whose bytes are on S3
    (minio's ComposeObject does): it was a 500, the stored stream could not seek."""
    gateway = boto3.client(
        "s3",
        endpoint_url=server.served.url,
        aws_access_key_id=server.admin.access_key_id,
        aws_secret_access_key=server.admin.secret_access_key,
        region_name="us-east-1",
    )
    data = os.urandom(6 << 20)
    gateway.put_object(Bucket=s3_repo, Key="main/compose/src", Body=data)
    key = "main/compose/dst"
    upload = gateway.create_multipart_upload(Bucket=s3_repo, Key=key)["UploadId"]
    parts = []
    for number, (first, last) in enumerate(((0, 5 << 20), (5 << 20, len(data))), 1):
        copied = gateway.upload_part_copy(
            Bucket=s3_repo,
            Key=key,
            UploadId=upload,
            PartNumber=number,
            CopySource={"Bucket": s3_repo, "Key": "main/compose/src"},
            CopySourceRange=f"bytes={first}-{last - 1}",
        )
        parts.append({"ETag": copied["CopyPartResult"]["ETag"], "PartNumber": number})
    gateway.complete_multipart_upload(
        Bucket=s3_repo, Key=key, UploadId=upload, MultipartUpload={"Parts": parts}
    )
    assert gateway.get_object(Bucket=s3_repo, Key=key)["Body"].read() == data
