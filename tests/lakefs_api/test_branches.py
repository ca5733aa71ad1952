"""Branches and tags through lakeFS's API: create, get, list, delete; reset (everything, an
object, a prefix), hard reset, revert and cherry-pick."""

from __future__ import annotations

import pytest

from tests.lakefs_api.conftest import Api, commit, error_of, unique, upload


def branches(repo: str) -> str:
    return f"/repositories/{repo}/branches"


def diff_paths(api: Api, repo: str, branch: str) -> list[str]:
    doc = api.ok("GET", f"{branches(repo)}/{branch}/diff")
    return [d["path"] for d in doc["results"]]


def test_create_get_delete(api: Api, repo: str) -> None:
    name = unique("b")
    response = api.post(branches(repo), json={"name": name, "source": "main"})
    assert response.status_code == 201
    head = api.ok("GET", f"{branches(repo)}/main")["commit_id"]
    assert response.text == head
    assert api.ok("GET", f"{branches(repo)}/{name}") == {"id": name, "commit_id": head}
    assert api.delete(f"{branches(repo)}/{name}").status_code == 204
    error_of(api.get(f"{branches(repo)}/{name}"), 404)
    error_of(api.delete(f"{branches(repo)}/{name}"), 404)


def test_create_errors(api: Api, repo: str, branch: str) -> None:
    error_of(api.post(branches(repo), json={"name": branch, "source": "main"}), 409)
    error_of(api.post(branches(repo), json={"name": "bad name", "source": "main"}), 400)
    error_of(api.post(branches(repo), json={"name": unique("b"), "source": "nowhere"}), 404)
    error_of(api.post(branches(repo), json={"name": unique("b")}, validate=False), 400)
    error_of(
        api.post("/repositories/no-such-repo/branches", json={"name": "x", "source": "main"}), 404
    )


def test_default_branch_cannot_be_deleted(api: Api, repo: str) -> None:
    error_of(api.delete(f"{branches(repo)}/main"), 403)


def test_list_pages(api: Api) -> None:
    repo = unique()
    api.ok(
        "POST", "/repositories", 201, json={"name": repo, "storage_namespace": f"local://{repo}"}
    )
    for name in ("a1", "a2", "a3", "b1"):
        api.ok("POST", branches(repo), 201, json={"name": name, "source": "main"})
    page = api.ok("GET", branches(repo), params={"prefix": "a", "amount": 2})
    assert [r["id"] for r in page["results"]] == ["a1", "a2"]
    assert page["pagination"]["has_more"] and page["pagination"]["next_offset"] == "a2"
    rest = api.ok("GET", branches(repo), params={"prefix": "a", "after": "a2"})
    assert [r["id"] for r in rest["results"]] == ["a3"] and not rest["pagination"]["has_more"]
    everything = api.ok("GET", branches(repo), params={"amount": -1})
    assert [r["id"] for r in everything["results"]] == ["a1", "a2", "a3", "b1", "main"]


def test_reset_everything_an_object_a_prefix(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "keep/a", b"committed")
    commit(api, repo, branch)
    for path in ("keep/a", "dir/b", "dir/c", "other"):
        upload(api, repo, branch, path, b"staged " + path.encode())
    base = f"{branches(repo)}/{branch}"
    assert api.put(base, json={"type": "object", "path": "keep/a"}).status_code == 204
    assert diff_paths(api, repo, branch) == ["dir/b", "dir/c", "other"]
    assert (
        api.get(f"/repositories/{repo}/refs/{branch}/objects", params={"path": "keep/a"}).content
        == b"committed"
    )
    assert api.put(base, json={"type": "common_prefix", "path": "dir/"}).status_code == 204
    assert diff_paths(api, repo, branch) == ["other"]
    assert api.put(base, json={"type": "reset"}).status_code == 204
    assert diff_paths(api, repo, branch) == []


def test_reset_of_a_new_object_leaves_the_branch_clean(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "new", b"n")
    base = f"{branches(repo)}/{branch}"
    assert api.put(base, json={"type": "object", "path": "new"}).status_code == 204
    assert diff_paths(api, repo, branch) == []
    made = commit(api, repo, branch, "x", allow_empty=True)
    body = {"ref": made["id"], "parent_number": 0, "allow_empty": True}
    assert api.post(f"{base}/revert", json=body).status_code == 204  # clean: revert runs


def test_reset_one_object_beside_a_longer_path(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "f.csv", b"1")
    upload(api, repo, branch, "f.csv.tmp", b"2")
    base = f"{branches(repo)}/{branch}"
    assert api.put(base, json={"type": "object", "path": "f.csv"}).status_code == 204
    assert diff_paths(api, repo, branch) == ["f.csv.tmp"]


def test_reset_bad_type_is_400(api: Api, repo: str, branch: str) -> None:
    base = f"{branches(repo)}/{branch}"
    error_of(api.put(base, json={"type": "object"}), 400)
    error_of(api.put(base, json={"type": "everything"}, validate=False), 400)


def test_hard_reset(api: Api, repo: str, branch: str) -> None:
    start = api.ok("GET", f"{branches(repo)}/{branch}")["commit_id"]
    upload(api, repo, branch, "h", b"1")
    commit(api, repo, branch)
    upload(api, repo, branch, "staged", b"2")
    response = api.put(f"{branches(repo)}/{branch}/hard_reset", params={"ref": start})
    assert response.status_code == 204
    assert api.ok("GET", f"{branches(repo)}/{branch}")["commit_id"] == start
    assert diff_paths(api, repo, branch) == []
    error_of(api.put(f"{branches(repo)}/{branch}/hard_reset", params={"ref": "nowhere"}), 404)


def test_revert(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "r", b"1")
    made = commit(api, repo, branch, "add r")
    body = {"ref": made["id"], "parent_number": 0, "commit_overrides": {"message": "undo r"}}
    assert api.post(f"{branches(repo)}/{branch}/revert", json=body).status_code == 204
    head = api.ok("GET", f"/repositories/{repo}/refs/{branch}/commits")["results"][0]
    assert head["message"] == "undo r"
    listing = api.ok("GET", f"/repositories/{repo}/refs/{branch}/objects/ls")
    assert "r" not in [o["path"] for o in listing["results"]]
    error_of(api.post(f"{branches(repo)}/{branch}/revert", json={"ref": "x"}, validate=False), 400)


def test_revert_of_a_dirty_branch_is_400(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "r", b"1")
    made = commit(api, repo, branch)
    upload(api, repo, branch, "dirty", b"1")
    body = {"ref": made["id"], "parent_number": 0}
    error_of(api.post(f"{branches(repo)}/{branch}/revert", json=body), 400)


def test_cherry_pick(api: Api, repo: str, branch: str) -> None:
    other = unique("b")
    api.ok("POST", branches(repo), 201, json={"name": other, "source": "main"})
    upload(api, repo, other, "picked", b"1")
    made = commit(api, repo, other, "pick me", metadata={"k": "v"})
    picked = api.ok("POST", f"{branches(repo)}/{branch}/cherry-pick", 201, json={"ref": other})
    assert picked["message"] == "pick me" and picked["metadata"]["k"] == "v"
    assert picked["metadata"]["cherry-pick-origin"] == made["id"]
    got = api.get(f"/repositories/{repo}/refs/{branch}/objects", params={"path": "picked"})
    assert got.content == b"1"


def test_tags(api: Api, repo: str) -> None:
    base = f"/repositories/{repo}/tags"
    head = api.ok("GET", f"{branches(repo)}/main")["commit_id"]
    name = unique("v")
    assert api.ok("POST", base, 201, json={"id": name, "ref": "main"}) == {
        "id": name,
        "commit_id": head,
    }
    assert api.ok("GET", f"{base}/{name}")["commit_id"] == head
    error_of(api.post(base, json={"id": name, "ref": "main"}), 409)
    assert api.post(base, json={"id": name, "ref": "main", "force": True}).status_code == 201
    assert name in [t["id"] for t in api.ok("GET", base, params={"prefix": name})["results"]]
    error_of(api.post(base, json={"id": unique("v"), "ref": "nowhere"}), 404)
    error_of(api.post(base, json={"id": "bad tag", "ref": "main"}), 400)
    assert api.delete(f"{base}/{name}").status_code == 204
    error_of(api.get(f"{base}/{name}"), 404)
    error_of(api.delete(f"{base}/{name}"), 404)


@pytest.mark.parametrize("path", ["/branches/{b}/hard_reset", "/branches/{b}/revert"])
def test_writes_to_missing_branches_are_404(api: Api, repo: str, path: str) -> None:
    url = f"/repositories/{repo}" + path.format(b="no-such-branch")
    if path.endswith("revert"):
        response = api.post(url, json={"ref": "main", "parent_number": 0})
    else:
        response = api.put(url, params={"ref": "main"})
    error_of(response, 404)
