"""Action runs (hooks from an action file) through lakeFS's API (imports: test_imports.py)."""

from __future__ import annotations

from tests.lakefs_api.conftest import Api, commit, error_of, unique, upload

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
    assert b"status: failed" in output.content and b"output:" not in output.content
    passed = runs["results"][0]["run_id"]
    hook_run_id = api.ok("GET", f"/repositories/{repo}/actions/runs/{passed}/hooks")["results"][0]
    text = api.get(
        f"/repositories/{repo}/actions/runs/{passed}/hooks/{hook_run_id['hook_run_id']}/output"
    ).text
    assert "status: passed" in text and text.endswith("output:\nowner is ada\n")
    error_of(api.get(f"/repositories/{repo}/actions/runs/no-such-run"), 404)
    error_of(api.get(f"/repositories/{repo}/actions/runs/{failed}/hooks/9999/output"), 404)
