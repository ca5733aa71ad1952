"""Direct data access through lakeFS's API: physical addresses, linking, presigned reads and
writes, presigned multipart uploads (on the moto S3 namespace), and the address checks."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import boto3
import requests

from tests.lakefs_api.conftest import BUCKET, Api, Server, error_of, unique, upload


def backing(repo: str, branch: str) -> str:
    return f"/repositories/{repo}/branches/{branch}/staging/backing"


def new_branch(api: Api, repo: str) -> str:
    name = unique("b")
    api.ok("POST", f"/repositories/{repo}/branches", 201, json={"name": name, "source": "main"})
    return name


def link(api: Api, repo: str, branch: str, path: str, address: str, etag: str, **kw: Any) -> Any:
    body = {"staging": {"physical_address": address}, "checksum": etag, "size_bytes": 0, **kw}
    return api.put(backing(repo, branch), params={"path": path}, json=body)


def s3(server: Server) -> Any:
    return boto3.client("s3", endpoint_url=server.moto_url)


def test_write_then_link_on_s3(server: Server, api: Api, s3_repo: str) -> None:
    branch = new_branch(api, s3_repo)
    doc = api.ok("GET", backing(s3_repo, branch), params={"path": "direct/a.bin"})
    address = doc["physical_address"]
    assert address.startswith(f"s3://{BUCKET}/{s3_repo}/data/") and "presigned_url" not in doc
    data = os.urandom(4096)
    key = address[len(f"s3://{BUCKET}/") :]
    etag = s3(server).put_object(Bucket=BUCKET, Key=key, Body=data)["ETag"]
    response = link(api, s3_repo, branch, "direct/a.bin", address, etag, user_metadata={"k": "v"})
    assert response.status_code == 200, response.text
    stats = response.json()
    assert stats["checksum"] == etag.strip('"') and stats["size_bytes"] == len(data)
    assert stats["metadata"] == {"k": "v"} and stats["physical_address"] == address
    got = api.get(f"/repositories/{s3_repo}/refs/{branch}/objects", params={"path": "direct/a.bin"})
    assert got.content == data


def test_presigned_write_and_reads(api: Api, s3_repo: str) -> None:
    branch = new_branch(api, s3_repo)
    doc = api.ok("GET", backing(s3_repo, branch), params={"path": "p/x", "presign": "true"})
    assert doc["presigned_url"].startswith("http") and doc["presigned_url_expiry"] > 0
    data = b"written through a presigned URL"
    put = requests.put(doc["presigned_url"], data=data, timeout=30)
    assert put.status_code == 200
    etag = put.headers["ETag"]
    assert link(api, s3_repo, branch, "p/x", doc["physical_address"], etag).status_code == 200
    url = f"/repositories/{s3_repo}/refs/{branch}/objects"
    stat = api.ok("GET", url + "/stat", params={"path": "p/x", "presign": "true"})
    assert stat["physical_address"].startswith("http") and stat["physical_address_expiry"] > 0
    assert requests.get(stat["physical_address"], timeout=30).content == data
    redirect = api.get(url, params={"path": "p/x", "presign": "true"})
    assert redirect.status_code == 302
    assert requests.get(redirect.headers["location"], timeout=30).content == data
    listed = api.ok("GET", url + "/ls", params={"prefix": "p/", "presign": "true"})
    assert requests.get(listed["results"][0]["physical_address"], timeout=30).content == data


def test_link_checks_addresses(server: Server, api: Api, s3_repo: str) -> None:
    branch = new_branch(api, s3_repo)
    outside = f"s3://{BUCKET}/elsewhere/obj"
    s3(server).put_object(Bucket=BUCKET, Key="elsewhere/obj", Body=b"x")
    assert "outside" in error_of(link(api, s3_repo, branch, "o", outside, "e"), 400)
    metadata = f"s3://{BUCKET}/{s3_repo}/_graveler/repository.json"
    error_of(link(api, s3_repo, branch, "o", metadata, "e"), 400)
    missing = f"s3://{BUCKET}/{s3_repo}/data/zz/{'0' * 32}"
    error_of(link(api, s3_repo, branch, "o", missing, "e"), 400)
    error_of(link(api, s3_repo, branch, "o", "", "e"), 400)
    body = {"staging": {"physical_address": missing}, "size_bytes": 1}
    error_of(
        api.put(backing(s3_repo, branch), params={"path": "o"}, json=body, validate=False), 400
    )
    listed = api.ok("GET", f"/repositories/{s3_repo}/branches/{branch}/diff")
    assert listed["results"] == []


def test_link_on_local_storage(server: Server, api: Api, repo: str) -> None:
    branch = new_branch(api, repo)
    doc = api.ok("GET", backing(repo, branch), params={"path": "l/x"})
    address = doc["physical_address"]
    assert address.startswith(f"local://{repo}/data/")
    target = Path(server.served.home) / "data" / address[len("local://") :]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"local bytes")
    etag = hashlib.md5(b"local bytes").hexdigest()
    assert link(api, repo, branch, "l/x", address, etag).status_code == 200
    got = api.get(f"/repositories/{repo}/refs/{branch}/objects", params={"path": "l/x"})
    assert got.content == b"local bytes"
    error_of(link(api, repo, branch, "l/y", f"local://{repo}/../{repo}/data/x", etag), 400)
    error_of(api.get(backing(repo, branch), params={"path": "l/z", "presign": "true"}), 400)


def test_link_conditions(server: Server, api: Api, s3_repo: str) -> None:
    branch = new_branch(api, s3_repo)
    upload(api, s3_repo, branch, "c/taken", b"old")
    address = api.ok("GET", backing(s3_repo, branch), params={"path": "c/taken"})[
        "physical_address"
    ]
    s3(server).put_object(Bucket=BUCKET, Key=address[len(f"s3://{BUCKET}/") :], Body=b"new")
    response = api.put(
        backing(s3_repo, branch),
        params={"path": "c/taken"},
        json={"staging": {"physical_address": address}, "checksum": "e", "size_bytes": 3},
        headers={"If-None-Match": "*"},
    )
    error_of(response, 412)


def test_presigned_multipart_upload(api: Api, s3_repo: str) -> None:
    branch = new_branch(api, s3_repo)
    base = f"/repositories/{s3_repo}/branches/{branch}/staging/pmpu"
    created = api.ok("POST", base, 201, params={"path": "mp/big", "parts": 2})
    urls = created["presigned_urls"]
    assert len(urls) == 2
    parts = [os.urandom(5 << 20), b"tail"]
    etags = []
    for url, data in zip(urls, parts, strict=True):
        put = requests.put(url, data=data, timeout=60)
        assert put.status_code == 200, put.text
        etags.append(put.headers["ETag"])
    body = {
        "physical_address": created["physical_address"],
        "parts": [{"part_number": i + 1, "etag": e} for i, e in enumerate(etags)],
        "content_type": "application/x-big",
    }
    done = api.ok("PUT", f"{base}/{created['upload_id']}", params={"path": "mp/big"}, json=body)
    assert done["size_bytes"] == sum(map(len, parts)) and done["checksum"].endswith("-2")
    got = api.get(f"/repositories/{s3_repo}/refs/{branch}/objects", params={"path": "mp/big"})
    assert got.content == b"".join(parts)
    again = api.ok("POST", base, 201, params={"path": "mp/other"})
    url = f"{base}/{again['upload_id']}/parts/1"
    part = api.ok(
        "PUT",
        url,
        params={"path": "mp/other"},
        json={"physical_address": again["physical_address"]},
    )
    assert part["presigned_url"].startswith("http")
    aborted = api.delete(
        f"{base}/{again['upload_id']}",
        params={"path": "mp/other"},
        json={"physical_address": again["physical_address"]},
    )
    assert aborted.status_code == 204


def test_multipart_errors(api: Api, s3_repo: str, repo: str) -> None:
    branch = new_branch(api, s3_repo)
    base = f"/repositories/{s3_repo}/branches/{branch}/staging/pmpu"
    error_of(api.post(base, params={"path": "x", "parts": 10001}), 400)
    error_of(
        api.post(f"/repositories/{s3_repo}/branches/nowhere/staging/pmpu", params={"path": "x"}),
        404,
    )
    created = api.ok("POST", base, 201, params={"path": "x"})
    body = {
        "physical_address": f"s3://{BUCKET}/elsewhere/x",
        "parts": [{"part_number": 1, "etag": "e"}],
    }
    error_of(api.put(f"{base}/{created['upload_id']}", params={"path": "x"}, json=body), 400)
    local = f"/repositories/{repo}/branches/main/staging/pmpu"
    assert "not implemented" in error_of(api.post(local, params={"path": "x"}), 501)
