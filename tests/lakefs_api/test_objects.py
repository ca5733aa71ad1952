"""Objects through lakeFS's API: upload (octet-stream, multipart form, conditional), get
(ranges, 304), head, stat, list and its pages, delete (one, many), copy, user metadata."""

from __future__ import annotations

import hashlib
import os
from typing import Any

import pytest

from tests.lakefs_api.conftest import Api, commit, error_of, unique, upload


def objects(repo: str, branch: str) -> str:
    return f"/repositories/{repo}/branches/{branch}/objects"


def read(api: Api, repo: str, ref: str, path: str, **kwargs: Any) -> Any:
    params = {"path": path, **kwargs.pop("params", {})}
    return api.get(f"/repositories/{repo}/refs/{ref}/objects", params=params, **kwargs)


def stat(api: Api, repo: str, ref: str, path: str, **params: object) -> dict:
    url = f"/repositories/{repo}/refs/{ref}/objects/stat"
    return api.ok("GET", url, params={"path": path, **params})


def ls(api: Api, repo: str, ref: str, **params: object) -> dict:
    return api.ok("GET", f"/repositories/{repo}/refs/{ref}/objects/ls", params=params)


# --- upload ------------------------------------------------------------------------------------


def test_upload_octet_stream(api: Api, repo: str, branch: str) -> None:
    data = b"hello, lake"
    doc = upload(
        api,
        repo,
        branch,
        "up/hello.txt",
        data,
        headers={"X-Lakefs-Meta-Owner": "ada", "Content-Type": "text/plain"},
        params={"storageClass": "GLACIER"},
    )
    assert doc["path"] == "up/hello.txt" and doc["path_type"] == "object"
    assert doc["size_bytes"] == len(data)
    assert doc["checksum"] == hashlib.md5(data).hexdigest()
    assert doc["content_type"] == "text/plain"
    assert doc["metadata"] == {"owner": "ada"}
    assert doc["physical_address"].startswith(f"local://{repo}/data/")
    assert read(api, repo, branch, "up/hello.txt").content == data
    assert stat(api, repo, branch, "up/hello.txt") == doc


def test_upload_multipart_form(api: Api, repo: str, branch: str) -> None:
    data = os.urandom(5000)
    response = api.post(
        objects(repo, branch),
        params={"path": "up/form.bin"},
        files={
            "other": ("x.txt", b"ignored", "text/plain"),
            "content": ("form.bin", data, "application/x-thing"),
        },
    )
    assert response.status_code == 201, response.text
    assert response.json()["content_type"] == "application/x-thing"
    assert read(api, repo, branch, "up/form.bin").content == data


def test_upload_form_without_content_is_400(api: Api, repo: str, branch: str) -> None:
    response = api.post(
        objects(repo, branch), params={"path": "up/none"}, files={"file": ("f", b"x")}
    )
    assert "content" in error_of(response, 400)
    error_of(read(api, repo, branch, "up/none"), 404)


@pytest.mark.parametrize("form", [False, True])
def test_large_uploads_stream(api: Api, repo: str, branch: str, form: bool) -> None:
    data = os.urandom(3 << 20)
    path = f"up/large-{form}"
    if form:
        response = api.post(objects(repo, branch), params={"path": path}, files={"content": data})
    else:
        response = api.post(
            objects(repo, branch),
            params={"path": path},
            data=iter([data[: 1 << 20], data[1 << 20 :]]),  # chunked: no Content-Length
            headers={"Content-Type": "application/octet-stream"},
        )
    assert response.status_code == 201, response.text
    assert response.json()["size_bytes"] == len(data)
    got = read(api, repo, branch, path)
    assert hashlib.sha256(got.content).digest() == hashlib.sha256(data).digest()


def test_chunked_multipart_form(api: Api, repo: str, branch: str) -> None:
    """A form streamed without a Content-Length (lakectl's Go client sends it so)."""
    data = os.urandom((2 << 20) + 5)
    boundary = "graveler-test-boundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="content"; filename="f"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    pieces = [head, data[: 1 << 20], data[1 << 20 :], tail]
    response = api.post(
        objects(repo, branch),
        params={"path": "up/chunked-form"},
        data=iter(pieces),
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert response.status_code == 201, response.text
    assert response.json()["content_type"] == "text/csv"
    assert read(api, repo, branch, "up/chunked-form").content == data


def test_conditional_uploads(api: Api, repo: str, branch: str) -> None:
    first = upload(api, repo, branch, "up/cond", b"1", headers={"If-None-Match": "*"})
    response = api.post(
        objects(repo, branch),
        params={"path": "up/cond"},
        data=b"2",
        headers={"If-None-Match": "*", "Content-Type": "application/octet-stream"},
    )
    error_of(response, 412)
    stale = {"If-Match": '"0123456789abcdef0123456789abcdef"'}
    error_of(
        api.post(objects(repo, branch), params={"path": "up/cond"}, data=b"3", headers=stale),
        412,
    )
    upload(api, repo, branch, "up/cond", b"4", headers={"If-Match": f'"{first["checksum"]}"'})
    assert read(api, repo, branch, "up/cond").content == b"4"


def test_upload_errors_change_nothing(api: Api, repo: str, branch: str) -> None:
    base = objects(repo, branch)
    error_of(api.post(base, data=b"x", validate=False), 400)  # no path
    for bad in ("", "x" * 1025, "nul\x00"):
        error_of(api.post(base, params={"path": bad}, data=b"x"), 400)
    error_of(api.post(objects(repo, "no-such-branch"), params={"path": "x"}, data=b"x"), 404)
    error_of(api.post(objects("no-such-repo", "main"), params={"path": "x"}, data=b"x"), 404)
    diff = api.ok("GET", f"/repositories/{repo}/branches/{branch}/diff")
    assert diff["results"] == []


# --- get, head, stat ---------------------------------------------------------------------------


def test_get_headers_and_304(api: Api, repo: str, branch: str) -> None:
    doc = upload(
        api, repo, branch, "g/x.json", b'{"a": 1}', headers={"Content-Type": "application/json"}
    )
    response = read(api, repo, branch, "g/x.json")
    assert response.headers["etag"] == f'"{doc["checksum"]}"'
    assert response.headers["content-type"] == "application/json"
    assert response.headers["last-modified"].endswith("GMT")
    cached = read(
        api, repo, branch, "g/x.json", headers={"If-None-Match": response.headers["etag"]}
    )
    assert cached.status_code == 304 and cached.content == b""


@pytest.mark.parametrize(
    ("wanted", "status", "body", "content_range"),
    [
        ("bytes=0-3", 206, b"0123", "bytes 0-3/10"),
        ("bytes=7-", 206, b"789", "bytes 7-9/10"),
        ("bytes=-4", 206, b"6789", "bytes 6-9/10"),
        ("bytes=8-100", 206, b"89", "bytes 8-9/10"),
        ("bytes=-100", 206, b"0123456789", "bytes 0-9/10"),
        ("bytes=10-", 416, None, "bytes */10"),
        ("bytes=5-2", 416, None, "bytes */10"),
        ("bytes=0-1,3-4", 416, None, "bytes */10"),
        ("bytes=-0", 416, None, "bytes */10"),
    ],
)
def test_ranges(
    api: Api, repo: str, wanted: str, status: int, body: bytes | None, content_range: str
) -> None:
    path = "g/digits"
    if (
        api.get(f"/repositories/{repo}/refs/main/objects/stat", params={"path": path}).status_code
        == 404
    ):
        upload(api, repo, "main", path, b"0123456789")
    response = read(api, repo, "main", path, headers={"Range": wanted})
    assert response.status_code == status, response.text
    assert response.headers["content-range"] == content_range
    if body is not None:
        assert response.content == body
        head = api.head(
            f"/repositories/{repo}/refs/main/objects",
            params={"path": path},
            headers={"Range": wanted},
        )
        assert head.status_code == 206 and head.headers["content-length"] == str(len(body))
    else:
        error_of(response, 416)


@pytest.mark.parametrize("wanted", ["bytes=abc", "items=0-1", "0-1"])
def test_malformed_ranges_are_400(api: Api, repo: str, branch: str, wanted: str) -> None:
    upload(api, repo, branch, "g/r", b"0123")
    error_of(read(api, repo, branch, "g/r", headers={"Range": wanted}, validate=False), 400)


def test_large_get_streams_verified(api: Api, repo: str, branch: str) -> None:
    data = os.urandom((2 << 20) + 17)
    upload(api, repo, branch, "g/large", data)
    assert read(api, repo, branch, "g/large").content == data
    part = read(api, repo, branch, "g/large", headers={"Range": "bytes=1048570-1048580"})
    assert part.content == data[1048570:1048581]


def test_head(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "g/h", b"head me")
    url = f"/repositories/{repo}/refs/{branch}/objects"
    response = api.head(url, params={"path": "g/h"})
    assert response.status_code == 200 and response.headers["content-length"] == "7"
    assert response.content == b""
    missing = api.head(url, params={"path": "g/none"})
    assert missing.status_code == 404 and missing.content == b""


def test_stat_without_user_metadata(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "g/m", b"m", headers={"X-Lakefs-Meta-K": "v"})
    assert stat(api, repo, branch, "g/m")["metadata"] == {"k": "v"}
    assert stat(api, repo, branch, "g/m", user_metadata="false")["metadata"] == {}
    error_of(
        api.get(f"/repositories/{repo}/refs/{branch}/objects/stat", params={"path": "g/none"}), 404
    )
    error_of(
        api.get(f"/repositories/{repo}/refs/nowhere/objects/stat", params={"path": "g/m"}), 404
    )


def test_reads_at_commits_and_tags(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "g/v", b"v1")
    made = commit(api, repo, branch)
    upload(api, repo, branch, "g/v", b"v2")
    assert read(api, repo, made["id"], "g/v").content == b"v1"
    assert read(api, repo, f"{branch}@", "g/v").content == b"v1"
    assert read(api, repo, branch, "g/v").content == b"v2"


def test_presign_on_local_storage_is_400(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "g/p", b"p")
    error_of(read(api, repo, branch, "g/p", params={"presign": "true"}), 400)


# --- list --------------------------------------------------------------------------------------


def test_list_with_delimiter_and_pages(api: Api, repo: str, branch: str) -> None:
    for path in ("l/a", "l/b/1", "l/b/2", "l/c", "l/d/1"):
        upload(api, repo, branch, path, b"x")
    doc = ls(api, repo, branch, prefix="l/", delimiter="/")
    assert [(r["path"], r["path_type"]) for r in doc["results"]] == [
        ("l/a", "object"),
        ("l/b/", "common_prefix"),
        ("l/c", "object"),
        ("l/d/", "common_prefix"),
    ]
    first = ls(api, repo, branch, prefix="l/", delimiter="/", amount=2)
    assert first["pagination"] == {
        "has_more": True,
        "next_offset": "l/b/",
        "results": 2,
        "max_per_page": 1000,
    }
    rest = ls(api, repo, branch, prefix="l/", delimiter="/", after="l/b/", amount=2)
    assert [r["path"] for r in rest["results"]] == ["l/c", "l/d/"]
    assert rest["pagination"]["has_more"] is False
    flat = ls(api, repo, branch, prefix="l/")
    assert [r["path"] for r in flat["results"]] == ["l/a", "l/b/1", "l/b/2", "l/c", "l/d/1"]
    assert all(
        "metadata" not in r
        for r in ls(api, repo, branch, prefix="l/", user_metadata="false")["results"]
    )
    assert ls(api, repo, branch, prefix="nothing/")["results"] == []


# --- delete, copy, metadata --------------------------------------------------------------------


def test_delete(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "del/one", b"1")
    url = objects(repo, branch)
    assert api.delete(url, params={"path": "del/one"}).status_code == 204
    error_of(read(api, repo, branch, "del/one"), 404)
    assert api.delete(url, params={"path": "del/one"}).status_code == 204  # as lakeFS


def test_delete_many(api: Api, repo: str, branch: str) -> None:
    for path in ("dm/a", "dm/b"):
        upload(api, repo, branch, path, b"x")
    url = objects(repo, branch) + "/delete"
    doc = api.ok("POST", url, json={"paths": ["dm/a", "dm/b", "dm/absent", "", "nul\x00"]})
    assert [(e["path"], e["status_code"]) for e in doc["errors"]] == [("nul\x00", 400)]
    assert ls(api, repo, branch, prefix="dm/")["results"] == []
    error_of(api.post(url, json={"paths": [f"p{i}" for i in range(1001)]}), 400)
    error_of(api.post(url, json={"paths": "dm/a"}, validate=False), 400)


def test_copy(api: Api, repo: str, branch: str) -> None:
    source = upload(api, repo, branch, "cp/src", b"copy me", headers={"X-Lakefs-Meta-A": "b"})
    url = objects(repo, branch) + "/copy"
    copied = api.ok("POST", url, 201, params={"dest_path": "cp/dst"}, json={"src_path": "cp/src"})
    assert copied["path"] == "cp/dst" and copied["checksum"] == source["checksum"]
    assert copied["metadata"] == {"a": "b"}
    assert read(api, repo, branch, "cp/dst").content == b"copy me"
    made = commit(api, repo, branch)
    other = unique("b")
    api.ok("POST", f"/repositories/{repo}/branches", 201, json={"name": other, "source": "main"})
    body = {"src_path": "cp/src", "src_ref": made["id"]}
    api.ok("POST", objects(repo, other) + "/copy", 201, params={"dest_path": "cp/x"}, json=body)
    assert read(api, repo, other, "cp/x").content == b"copy me"
    error_of(api.post(url, params={"dest_path": "cp/y"}, json={"src_path": "cp/none"}), 404)
    error_of(api.post(url, params={"dest_path": "x" * 1025}, json={"src_path": "cp/src"}), 400)


def test_update_user_metadata(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "um/x", b"x", headers={"X-Lakefs-Meta-Old": "1"})
    url = objects(repo, branch) + "/stat/user_metadata"
    response = api.put(url, params={"path": "um/x"}, json={"set": {"new": "2"}})
    assert response.status_code == 201
    assert stat(api, repo, branch, "um/x")["metadata"] == {"new": "2"}
    error_of(api.put(url, params={"path": "um/none"}, json={"set": {}}), 404)
    error_of(api.put(url, params={"path": "um/x"}, json={"set": {"n": 1}}, validate=False), 400)


def test_underlying_properties(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "up/props", b"x")
    doc = api.ok(
        "GET",
        f"/repositories/{repo}/refs/{branch}/objects/underlyingProperties",
        params={"path": "up/props"},
    )
    assert doc == {"storage_class": None}
