"""Commits, log, diff and merge through lakeFS's API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.lakefs_api.conftest import Api, commit, error_of, unique, upload


def new_branch(api: Api, repo: str, source: str = "main") -> str:
    name = unique("b")
    api.ok("POST", f"/repositories/{repo}/branches", 201, json={"name": name, "source": source})
    return name


def log(api: Api, repo: str, ref: str, **params: object) -> dict:
    return api.ok("GET", f"/repositories/{repo}/refs/{ref}/commits", params=params)


# --- commit ------------------------------------------------------------------------------------


def test_commit_shape(api: Api, repo: str, branch: str) -> None:
    upload(api, repo, branch, "c/1", b"1")
    made = commit(api, repo, branch, "first", metadata={"owner": "lake"})
    assert made["message"] == "first" and made["metadata"] == {"owner": "lake"}
    assert made["committer"] == api.auth[0]  # type: ignore[index]
    assert len(made["parents"]) == 1 and made["meta_range_id"]
    assert api.ok("GET", f"/repositories/{repo}/commits/{made['id']}") == made
    assert api.ok("GET", f"/repositories/{repo}/commits/{branch}")["id"] == made["id"]


def test_commit_date_and_allow_empty(api: Api, repo: str, branch: str) -> None:
    error_of(
        api.post(f"/repositories/{repo}/branches/{branch}/commits", json={"message": "m"}), 400
    )
    made = commit(api, repo, branch, "empty", allow_empty=True, date=1_600_000_000)
    assert made["creation_date"] == 1_600_000_000


def test_commit_errors(api: Api, repo: str, branch: str) -> None:
    base = f"/repositories/{repo}/branches/{branch}/commits"
    error_of(api.post(base, json={"message": ""}), 400)
    error_of(api.post(base, json={}, validate=False), 400)
    error_of(api.post(f"/repositories/{repo}/branches/nowhere/commits", json={"message": "m"}), 404)
    error_of(api.get(f"/repositories/{repo}/commits/{'0' * 64}"), 404)


# --- log ---------------------------------------------------------------------------------------


def test_log_pages_and_filters(api: Api, repo: str) -> None:
    branch = new_branch(api, repo)
    made = []
    for i in range(5):
        upload(api, repo, branch, f"logs/{i % 2}/f{i}", str(i).encode())
        made.append(commit(api, repo, branch, f"c{i}")["id"])
    made.reverse()  # newest first
    first = log(api, repo, branch, amount=2)
    assert [c["id"] for c in first["results"]] == made[:2]
    assert first["pagination"]["has_more"] and first["pagination"]["next_offset"] == made[1]
    second = log(api, repo, branch, amount=2, after=made[1])
    assert [c["id"] for c in second["results"]] == made[2:4]
    limited = log(api, repo, branch, amount=2, limit="true")
    assert len(limited["results"]) == 2 and not limited["pagination"]["has_more"]
    assert [c["id"] for c in log(api, repo, branch, objects="logs/1/f3")["results"]] == [made[1]]
    by_prefix = log(api, repo, branch, prefixes="logs/0/")["results"]
    assert [c["id"] for c in by_prefix] == [made[0], made[2], made[4]]
    stopped = log(api, repo, branch, stop_at=made[2])["results"]
    assert [c["id"] for c in stopped] == made[:3]
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert log(api, repo, branch, since=future)["results"] == []
    error_of(api.get(f"/repositories/{repo}/refs/{branch}/commits", params={"since": "soon"}), 400)
    error_of(api.get(f"/repositories/{repo}/refs/nowhere/commits"), 404)


def test_log_first_parent(api: Api, repo: str) -> None:
    branch = new_branch(api, repo)
    side = new_branch(api, repo, branch)
    upload(api, repo, side, "fp/side", b"s")
    side_commit = commit(api, repo, side, "side")["id"]
    upload(api, repo, branch, "fp/main", b"m")
    commit(api, repo, branch, "main")
    api.ok("POST", f"/repositories/{repo}/refs/{side}/merge/{branch}", json={})
    everything = [c["id"] for c in log(api, repo, branch, amount=10)["results"]]
    first_parent = [
        c["id"] for c in log(api, repo, branch, amount=10, first_parent="true")["results"]
    ]
    assert side_commit in everything and side_commit not in first_parent


# --- diff --------------------------------------------------------------------------------------


def test_diff_refs(api: Api, repo: str) -> None:
    left = new_branch(api, repo)
    upload(api, repo, left, "d/keep", b"k")
    upload(api, repo, left, "d/change", b"old")
    upload(api, repo, left, "d/remove", b"r")
    commit(api, repo, left)
    right = new_branch(api, repo, left)
    upload(api, repo, right, "d/change", b"new")
    upload(api, repo, right, "d/sub/added", b"a")
    api.delete(f"/repositories/{repo}/branches/{right}/objects", params={"path": "d/remove"})
    commit(api, repo, right)
    upload(api, repo, left, "d/left-only", b"l")  # only on the left: a two-dot diff shows it
    commit(api, repo, left)
    url = f"/repositories/{repo}/refs/{left}/diff/{right}"
    three = api.ok("GET", url)["results"]
    assert [(d["type"], d["path"]) for d in three] == [
        ("changed", "d/change"),
        ("removed", "d/remove"),
        ("added", "d/sub/added"),
    ]
    assert all(d["path_type"] == "object" and "size_bytes" in d for d in three)
    two = api.ok("GET", url, params={"type": "two_dot"})["results"]
    assert ("removed", "d/left-only") in [(d["type"], d["path"]) for d in two]
    grouped = api.ok("GET", url, params={"delimiter": "/", "prefix": "d/"})["results"]
    assert [(d["path"], d["path_type"]) for d in grouped] == [
        ("d/change", "object"),
        ("d/remove", "object"),
        ("d/sub/", "common_prefix"),
    ]
    page = api.ok("GET", url, params={"amount": 1})
    assert page["pagination"]["next_offset"] == "d/change"
    rest = api.ok("GET", url, params={"amount": 5, "after": "d/change"})["results"]
    assert [d["path"] for d in rest] == ["d/remove", "d/sub/added"]
    stats = api.ok("GET", url, params={"include_right_stats": "true", "prefix": "d/change"})
    assert stats["results"][0]["right"]["checksum"]
    error_of(api.get(url, params={"type": "one_dot"}, validate=False), 400)
    error_of(api.get(f"/repositories/{repo}/refs/{left}/diff/nowhere"), 404)


def test_diff_uncommitted_with_delimiter(api: Api, repo: str, branch: str) -> None:
    for path in ("u/a", "u/deep/1", "u/deep/2", "u/z"):
        upload(api, repo, branch, path, b"x")
    url = f"/repositories/{repo}/branches/{branch}/diff"
    doc = api.ok("GET", url, params={"prefix": "u/", "delimiter": "/"})
    assert [(d["path"], d["type"]) for d in doc["results"]] == [
        ("u/a", "added"),
        ("u/deep/", "prefix_changed"),
        ("u/z", "added"),
    ]
    first = api.ok("GET", url, params={"prefix": "u/", "delimiter": "/", "amount": 2})
    assert first["pagination"]["next_offset"] == "u/deep/"
    rest = api.ok(
        "GET", url, params={"prefix": "u/", "delimiter": "/", "after": "u/deep/", "amount": 2}
    )
    assert [d["path"] for d in rest["results"]] == ["u/z"]


# --- merge -------------------------------------------------------------------------------------


def test_merge_and_merge_base(api: Api, repo: str) -> None:
    dest = new_branch(api, repo)
    source = new_branch(api, repo, dest)
    base = api.ok("GET", f"/repositories/{repo}/branches/{dest}")["commit_id"]
    upload(api, repo, source, "m/s", b"s")
    source_head = commit(api, repo, source)["id"]
    upload(api, repo, dest, "m/d", b"d")
    commit(api, repo, dest)
    found = api.ok("GET", f"/repositories/{repo}/refs/{source}/merge/{dest}")
    assert found["base_commit_id"] == base and found["source_commit_id"] == source_head
    body = {"message": "merge it", "metadata": {"why": "test"}}
    merged = api.ok("POST", f"/repositories/{repo}/refs/{source}/merge/{dest}", json=body)
    head = api.ok("GET", f"/repositories/{repo}/commits/{merged['reference']}")
    assert head["message"] == "merge it" and head["metadata"]["why"] == "test"
    assert sorted(head["parents"]) == sorted([source_head, head["parents"][0]])
    again = api.post(f"/repositories/{repo}/refs/{source}/merge/{dest}", json={})
    error_of(again, 400)  # nothing to merge, as lakeFS answers


def test_merge_conflict_is_409(api: Api, repo: str) -> None:
    dest = new_branch(api, repo)
    source = new_branch(api, repo, dest)
    for branch, data in ((dest, b"dest"), (source, b"source")):
        upload(api, repo, branch, "conflict", data)
        commit(api, repo, branch)
    url = f"/repositories/{repo}/refs/{source}/merge/{dest}"
    response = api.post(url, json={})
    assert "conflict" in error_of(response, 409)
    assert response.json()["reference"] == ""
    resolved = api.ok("POST", url, json={"strategy": "source-wins"})
    content = api.get(
        f"/repositories/{repo}/refs/{resolved['reference']}/objects", params={"path": "conflict"}
    )
    assert content.content == b"source"


def test_merge_never_fast_forwards(api: Api, repo: str) -> None:
    dest = new_branch(api, repo)
    source = new_branch(api, repo, dest)
    dest_head = api.ok("GET", f"/repositories/{repo}/branches/{dest}")["commit_id"]
    upload(api, repo, source, "ff", b"1")
    source_head = commit(api, repo, source)["id"]
    merged = api.ok("POST", f"/repositories/{repo}/refs/{source}/merge/{dest}")
    head = api.ok("GET", f"/repositories/{repo}/commits/{merged['reference']}")
    assert head["parents"] == [dest_head, source_head]


def test_squash_merge(api: Api, repo: str) -> None:
    dest = new_branch(api, repo)
    source = new_branch(api, repo, dest)
    dest_head = api.ok("GET", f"/repositories/{repo}/branches/{dest}")["commit_id"]
    upload(api, repo, source, "sq", b"1")
    commit(api, repo, source)
    merged = api.ok(
        "POST", f"/repositories/{repo}/refs/{source}/merge/{dest}", json={"squash_merge": True}
    )
    head = api.ok("GET", f"/repositories/{repo}/commits/{merged['reference']}")
    assert head["parents"] == [dest_head]


def test_merge_errors(api: Api, repo: str, branch: str) -> None:
    base = f"/repositories/{repo}/refs"
    error_of(api.post(f"{base}/nowhere/merge/{branch}", json={}), 404)
    error_of(api.post(f"{base}/main/merge/nowhere", json={}), 404)
    error_of(api.post(f"{base}/main/merge/{branch}", json={"strategy": "both-win"}), 400)
    upload(api, repo, branch, "dirty", b"x")
    other = new_branch(api, repo)
    upload(api, repo, other, "o", b"o")
    commit(api, repo, other)
    error_of(api.post(f"{base}/{other}/merge/{branch}", json={}), 400)  # dirty destination
