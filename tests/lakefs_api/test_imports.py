"""Imports through lakeFS's API, as lakeFS's ImportManager drives them: several paths of both
types in one import, answered at once (202) while the import runs on the server, its status
polled (progress, commit, error), canceled, and reported failed when the server running it
died. The S3 sources are the session's moto bucket; a test holds moto's answer for one object
to keep an import running for as long as it needs."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.s3.models import S3Backend

from tests.lakefs_api.conftest import BUCKET, ISOLATION, Api, Server, error_of, unique, upload
from tests.serving import Served

HELD = "hold-me"


def new_repo(api: Api) -> str:
    name = unique()
    body = {"name": name, "storage_namespace": f"local://{name}"}
    api.ok("POST", "/repositories", 201, json=body)
    return name


def start(api: Api, repo: str, branch: str, *paths: dict[str, str]) -> Any:
    body = {"paths": list(paths), "commit": {"message": "import it", "metadata": {"src": "t"}}}
    return api.post(f"/repositories/{repo}/branches/{branch}/import", json=body)


def prefix(path: str, destination: str) -> dict[str, str]:
    return {"type": "common_prefix", "path": path, "destination": destination}


def single(path: str, destination: str) -> dict[str, str]:
    return {"type": "object", "path": path, "destination": destination}


def status(api: Api, repo: str, branch: str, import_id: str) -> Any:
    url = f"/repositories/{repo}/branches/{branch}/import"
    return api.ok("GET", url, params={"id": import_id})


def wait(api: Api, repo: str, branch: str, import_id: str, timeout: float = 60) -> Any:
    """Poll as lakeFS's ImportManager does, until completed or failed."""
    deadline = time.monotonic() + timeout
    while True:
        found = status(api, repo, branch, import_id)
        if found["completed"] or found.get("error"):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.1)


def put_objects(server: Server, keys: dict[str, bytes]) -> None:
    s3 = boto3.client("s3", endpoint_url=server.moto_url)
    for key, data in keys.items():
        s3.put_object(Bucket=BUCKET, Key=key, Body=data)


class Held:
    """moto's answer to reads of objects whose key ends with ``hold-me``, held (once
    ``armed``: uploading them reads them too) until the test ``release``s it; ``reached``
    once a read is held."""

    def __init__(self) -> None:
        self.armed, self.reached, self.release = (threading.Event() for _ in range(3))


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[Held]:
    hold = Held()
    real = S3Backend.get_object

    def get_object(self: S3Backend, bucket_name: str, key_name: str, *a: Any, **k: Any) -> Any:
        if key_name.endswith(HELD) and hold.armed.is_set():
            hold.reached.set()
            hold.release.wait(60)
        return real(self, bucket_name, key_name, *a, **k)

    monkeypatch.setattr(S3Backend, "get_object", get_object)
    yield hold
    hold.release.set()


def test_several_paths_of_both_types_in_one_commit(
    server: Server, api: Api, tmp_path: Path
) -> None:
    repo = new_repo(api)
    src = unique("src")
    put_objects(server, {f"{src}/a.csv": b"a", f"{src}/sub/b.csv": b"bb", f"{src}/one": b"1"})
    local = tmp_path / "local"
    (local / "deep").mkdir(parents=True)
    (local / "deep" / "c.txt").write_bytes(b"ccc")
    upload(api, repo, "main", "tables/old", b"replaced")
    api.ok("POST", f"/repositories/{repo}/branches/main/commits", 201, json={"message": "m"})
    response = start(
        api,
        repo,
        "main",
        prefix(f"s3://{BUCKET}/{src}/", "tables/"),
        single(f"s3://{BUCKET}/{src}/one", "single/one.bin"),
        prefix(f"local://{local}", "local/"),
    )
    assert response.status_code == 202, response.text
    done = wait(api, repo, "main", response.json()["id"])
    assert done["completed"] and done.get("error") is None and done["ingested_objects"] == 5
    assert done["commit"]["message"] == "import it" and done["commit"]["metadata"]["src"] == "t"
    assert done["metarange_id"] == done["commit"]["meta_range_id"]
    listed = api.ok("GET", f"/repositories/{repo}/refs/main/objects/ls")["results"]
    assert [o["path"] for o in listed] == [
        "local/deep/c.txt",
        "single/one.bin",
        "tables/a.csv",
        "tables/one",
        "tables/sub/b.csv",
    ]
    got = api.get(f"/repositories/{repo}/refs/main/objects", params={"path": "single/one.bin"})
    assert got.content == b"1"
    url = f"/repositories/{repo}/branches/main/import"
    error_of(api.delete(url, params={"id": response.json()["id"]}), 409)  # completed
    error_of(api.get(url, params={"id": "0" * 20}), 404)
    error_of(api.get(url, params={"id": "../../etc"}), 404)


def test_the_import_answers_at_once_and_can_be_canceled(
    server: Server, api: Api, held: Held
) -> None:
    repo = new_repo(api)
    head = api.ok("GET", f"/repositories/{repo}/branches/main")["commit_id"]
    src = unique("slow")
    put_objects(server, {f"{src}/a": b"a", f"{src}/b-{HELD}": b"b"})
    held.armed.set()
    response = start(api, repo, "main", prefix(f"s3://{BUCKET}/{src}/", "in/"))
    assert response.status_code == 202, response.text  # while the import is held
    import_id = response.json()["id"]
    assert held.reached.wait(30)
    running = status(api, repo, "main", import_id)
    assert running["completed"] is False and "error" not in running
    assert api.get("/healthcheck").status_code == 204  # the server keeps answering
    url = f"/repositories/{repo}/branches/main/import"
    assert api.delete(url, params={"id": import_id}).status_code == 204
    assert api.delete(url, params={"id": import_id}).status_code == 204  # twice is fine
    canceled = status(api, repo, "main", import_id)
    assert canceled["completed"] is False and "Canceled" in canceled["error"]["message"]
    held.release.set()
    time.sleep(1.5)  # the import stops at its next batch, or at its commit
    final = status(api, repo, "main", import_id)
    assert final["update_time"] == canceled["update_time"] and not final["completed"]
    assert api.ok("GET", f"/repositories/{repo}/branches/main")["commit_id"] == head
    assert api.ok("GET", f"/repositories/{repo}/branches/main/diff")["results"] == []


def test_problems_found_at_once(server: Server, api: Api, repo: str, tmp_path: Path) -> None:
    branch = unique("b")
    api.ok("POST", f"/repositories/{repo}/branches", 201, json={"name": branch, "source": "main"})
    bad_paths: list[dict[str, str]] = [
        {"type": "directory", "path": f"s3://{BUCKET}/a/", "destination": "a/"},
        single(f"s3://{BUCKET}/a/", "x"),  # an object source names an object
        single(f"s3://{BUCKET}/a/x", "dir/"),  # and lands at a path
        prefix("gs://bucket/x/", "x/"),
        prefix(f"local://{server.served.home}/data/{repo}", "x/"),  # a namespace
    ]
    for bad in bad_paths:
        error_of(start(api, repo, branch, bad), 400)
    body = {"paths": [], "commit": {"message": "m"}}
    error_of(api.post(f"/repositories/{repo}/branches/{branch}/import", json=body), 400)
    writer = server.api(server.writer)
    error_of(start(writer, repo, branch, prefix(f"local://{tmp_path}", "x/")), 403)
    upload(api, repo, branch, "dirty", b"x")
    put_objects(server, {"dirty-src/x": b"x"})
    error_of(start(api, repo, branch, prefix(f"s3://{BUCKET}/dirty-src/", "d/")), 400)
    error_of(start(api, repo, "nowhere", prefix(f"s3://{BUCKET}/dirty-src/", "d/")), 404)


def test_a_failed_import_reports_its_error(server: Server, api: Api) -> None:
    repo = new_repo(api)
    response = start(api, repo, "main", single(f"s3://{BUCKET}/{unique('none')}/gone", "g"))
    assert response.status_code == 202
    failed = wait(api, repo, "main", response.json()["id"])
    assert failed["completed"] is False and "does not exist" in failed["error"]["message"]


def test_an_import_whose_server_died_is_reported_failed(
    server: Server, held: Held, tmp_path: Path
) -> None:
    """A server killed in the middle of an import: the next server's first status read
    after the lease reports it failed (never running forever)."""
    home = tmp_path / "home"
    env = {
        **ISOLATION,
        "GRAVELER_S3_ENDPOINT_URL": server.moto_url,
        "GRAVELER_IMPORT_LEASE_SECONDS": "1",
    }
    src = unique("dying")
    put_objects(server, {f"{src}/x-{HELD}": b"x"})
    held.armed.set()
    with Served(home, None, env=env) as first:
        key = first.credentials("--admin")
        api = Api(
            str(first.urls["lakefs"]), server.spec, (key.access_key_id, key.secret_access_key)
        )
        repo = new_repo(api)
        response = start(api, repo, "main", prefix(f"s3://{BUCKET}/{src}/", "in/"))
        assert response.status_code == 202
        assert held.reached.wait(30)
        assert first.process is not None
        first.process.kill()  # no clean shutdown: the import's thread dies with it
        first.process.wait(30)
    time.sleep(1.5)  # past the lease
    with Served(home, None, env=env) as second:
        api = Api(
            str(second.urls["lakefs"]), server.spec, (key.access_key_id, key.secret_access_key)
        )
        found = status(api, repo, "main", response.json()["id"])
        assert found["completed"] is False and "no sign of life" in found["error"]["message"]
