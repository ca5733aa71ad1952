"""Action runs (hooks from an action file) and imports through lakeFS's API."""

from __future__ import annotations

from pathlib import Path

import boto3

from tests.lakefs_api.conftest import BUCKET, Api, Server, commit, error_of, unique, upload

ACTION = b"""name: Require an owner
on:
  pre-commit:
    branches: ["*"]
hooks:
  - id: owner
    type: python
    properties:
      callable: tests.lakefs_api.hookfuncs:require_key
      params: {key: owner}
"""


def new_repo(api: Api) -> str:
    name = unique()
    body = {"name": name, "storage_namespace": f"local://{name}"}
    api.ok("POST", "/repositories", 201, json=body)
    return name


# --- actions -----------------------------------------------------------------------------------


def test_hook_runs(api: Api) -> None:
    repo = new_repo(api)
    upload(api, repo, "main", "_graveler_actions/owner.yaml", ACTION)
    refused = api.post(f"/repositories/{repo}/branches/main/commits", json={"message": "no owner"})
    assert "hook" in error_of(refused, 412)
    made = commit(api, repo, "main", "owned", metadata={"owner": "ada"})
    runs = api.ok("GET", f"/repositories/{repo}/actions/runs")
    statuses = [(r["event_type"], r["status"]) for r in runs["results"]]
    assert statuses == [("pre-commit", "completed"), ("pre-commit", "failed")]
    assert runs["results"][0]["commit_id"] == made["id"]
    assert runs["results"][0]["branch"] == "main"
    page = api.ok("GET", f"/repositories/{repo}/actions/runs", params={"amount": 1})
    assert page["pagination"]["has_more"] and len(page["results"]) == 1
    rest = api.ok(
        "GET",
        f"/repositories/{repo}/actions/runs",
        params={"after": page["pagination"]["next_offset"]},
    )
    assert [r["status"] for r in rest["results"]] == ["failed"]
    by_commit = api.ok("GET", f"/repositories/{repo}/actions/runs", params={"commit": made["id"]})
    assert len(by_commit["results"]) == 1
    failed = runs["results"][1]["run_id"]
    assert api.ok("GET", f"/repositories/{repo}/actions/runs/{failed}")["status"] == "failed"
    hooks = api.ok("GET", f"/repositories/{repo}/actions/runs/{failed}/hooks")["results"]
    assert [(h["hook_id"], h["status"]) for h in hooks] == [("owner", "failed")]
    output = api.get(
        f"/repositories/{repo}/actions/runs/{failed}/hooks/{hooks[0]['hook_run_id']}/output"
    )
    assert output.status_code == 200 and b"owner" in output.content
    error_of(api.get(f"/repositories/{repo}/actions/runs/no-such-run"), 404)
    error_of(api.get(f"/repositories/{repo}/actions/runs/{failed}/hooks/9999/output"), 404)


# --- imports -----------------------------------------------------------------------------------


def start(api: Api, repo: str, branch: str, path: str, destination: str = "imported/") -> object:
    body = {
        "paths": [{"type": "common_prefix", "path": path, "destination": destination}],
        "commit": {"message": "import it", "metadata": {"src": "test"}},
    }
    return api.post(f"/repositories/{repo}/branches/{branch}/import", json=body)


def test_import_from_s3(server: Server, api: Api) -> None:
    repo = new_repo(api)
    s3 = boto3.client("s3", endpoint_url=server.moto_url)
    prefix = unique("src")
    for name in ("a.csv", "sub/b.csv"):
        s3.put_object(Bucket=BUCKET, Key=f"{prefix}/{name}", Body=name.encode())
    response = start(api, repo, "main", f"s3://{BUCKET}/{prefix}/")
    assert response.status_code == 202, response.text
    import_id = response.json()["id"]
    url = f"/repositories/{repo}/branches/main/import"
    status = api.ok("GET", url, params={"id": import_id})
    assert status["completed"] is True and status["ingested_objects"] == 2
    assert status["commit"]["message"] == "import it"
    assert status["commit"]["metadata"]["src"] == "test"
    got = api.get(f"/repositories/{repo}/refs/main/objects", params={"path": "imported/sub/b.csv"})
    assert got.content == b"sub/b.csv"
    error_of(api.delete(url, params={"id": import_id}), 409)
    error_of(api.get(url, params={"id": "0" * 20}), 404)
    error_of(api.get(url, params={"id": "../../etc"}), 404)


def test_import_from_local_disk_takes_an_admin_key(
    server: Server, api: Api, tmp_path: Path
) -> None:
    repo = new_repo(api)
    source = tmp_path / "source"
    source.mkdir()
    (source / "one.txt").write_bytes(b"one")
    writer = server.api(server.writer)
    error_of(start(writer, repo, "main", f"local://{source}"), 403)
    response = start(api, repo, "main", f"local://{source}")
    assert response.status_code == 202, response.text
    got = api.get(f"/repositories/{repo}/refs/main/objects", params={"path": "imported/one.txt"})
    assert got.content == b"one"


def test_import_errors(server: Server, api: Api, repo: str) -> None:
    branch = unique("b")
    api.ok("POST", f"/repositories/{repo}/branches", 201, json={"name": branch, "source": "main"})
    url = f"/repositories/{repo}/branches/{branch}/import"
    two = {
        "paths": [
            {"type": "common_prefix", "path": f"s3://{BUCKET}/a/", "destination": "a/"},
            {"type": "common_prefix", "path": f"s3://{BUCKET}/b/", "destination": "b/"},
        ],
        "commit": {"message": "m"},
    }
    error_of(api.post(url, json=two), 400)
    single = {"type": "object", "path": f"s3://{BUCKET}/a/x", "destination": "x"}
    error_of(api.post(url, json={"paths": [single], "commit": {"message": "m"}}), 400)
    error_of(start(api, repo, branch, "gs://bucket/x/"), 400)
    error_of(start(api, repo, branch, f"local://{server.served.home}/data/{repo}"), 400)
    upload(api, repo, branch, "dirty", b"x")
    s3 = boto3.client("s3", endpoint_url=server.moto_url)
    s3.put_object(Bucket=BUCKET, Key="dirty-src/x", Body=b"x")
    error_of(start(api, repo, branch, f"s3://{BUCKET}/dirty-src/"), 400)
    error_of(start(api, repo, "nowhere", f"s3://{BUCKET}/dirty-src/"), 404)
