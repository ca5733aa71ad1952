"""Repositories through lakeFS's API: create (local, S3, with sample data), get, list and its
pages, delete, metadata, branch protection rules, and who may do what."""

from __future__ import annotations

import io
import json

import pyarrow.parquet as pq
import pytest

from tests.lakefs_api.conftest import BUCKET, SCOPED, Api, Server, error_of, unique, upload


def create(api: Api, name: str, namespace: str | None = None, **body: object) -> object:
    return api.post(
        "/repositories",
        json={"name": name, "storage_namespace": namespace or f"local://{name}", **body},
    )


def test_create_get_delete(api: Api) -> None:
    name = unique()
    response = create(api, name, default_branch="trunk")
    assert response.status_code == 201
    doc = response.json()
    assert doc["id"] == name and doc["default_branch"] == "trunk"
    assert doc["storage_namespace"] == f"local://{name}" and doc["storage_id"] == ""
    assert api.ok("GET", f"/repositories/{name}") == doc
    branches = api.ok("GET", f"/repositories/{name}/branches")["results"]
    assert [b["id"] for b in branches] == ["trunk"]
    assert api.delete(f"/repositories/{name}").status_code == 204
    error_of(api.get(f"/repositories/{name}"), 404)
    error_of(api.delete(f"/repositories/{name}"), 404)


def test_local_namespace_spellings(api: Api) -> None:
    name = unique()
    response = create(api, name, f"local:///{name}")  # lakefs-spec: prefix + "/" + name
    assert response.status_code == 201
    assert response.json()["storage_namespace"] == f"local://{name}"


def test_s3_namespace(api: Api) -> None:
    name = unique()
    doc = create(api, name, f"s3://{BUCKET}/{name}").json()
    assert doc["storage_namespace"] == f"s3://{BUCKET}/{name}"
    assert doc["storage_id"] == "s3"  # not the server's default blockstore (local)
    config = api.ok("GET", "/config")
    listed = {c["blockstore_id"]: c for c in config["storage_config_list"]}
    assert listed["s3"]["blockstore_type"] == "s3" and listed["s3"]["pre_sign_support"]
    assert create(api, unique(), f"s3://{BUCKET}/{unique()}", storage_id="s3").status_code == 201
    error_of(create(api, unique(), storage_id="s3"), 400)  # a local namespace


def test_existing_name_is_409(api: Api, repo: str) -> None:
    assert error_of(create(api, repo, f"local://{unique()}"), 409) == (
        "error creating repository: not unique"
    )


@pytest.mark.parametrize("name", ["ab", "Upper", "-dash", "a_b", "x" * 64, ""])
def test_bad_names_are_400(api: Api, name: str) -> None:
    error_of(create(api, name, f"local://{unique()}"), 400)
    if name:
        assert api.get(f"/repositories/{name}").status_code in (400, 404)


@pytest.mark.parametrize(
    "namespace",
    ["local://", "local://../escape", "file:///etc", "gs://bucket/x", "nonsense", "s3://"],
)
def test_bad_namespaces_are_400_and_create_nothing(api: Api, namespace: str) -> None:
    name = unique()
    error_of(create(api, name, namespace), 400)
    error_of(api.get(f"/repositories/{name}"), 404)


def test_namespace_in_use_is_400(api: Api, repo: str) -> None:
    name = unique()
    message = error_of(create(api, name, f"local://{repo}"), 400)
    assert repo in message
    error_of(api.get(f"/repositories/{name}"), 404)


def test_malformed_bodies_are_400(api: Api) -> None:
    error_of(api.post("/repositories", data=b"{not json", validate=False), 400)
    error_of(api.post("/repositories", json=["a", "list"], validate=False), 400)
    error_of(api.post("/repositories", json={"name": unique()}, validate=False), 400)


def test_only_admin_keys_create_and_delete(server: Server, repo: str) -> None:
    for key in (server.writer, server.reader, server.scoped):
        keyed = server.api(key)
        error_of(create(keyed, unique()), 403)
        error_of(keyed.delete(f"/repositories/{repo}"), 403)
    assert server.api().get(f"/repositories/{repo}").status_code == 200


def test_list_pages(api: Api) -> None:
    stem = unique("pg")
    names = [f"{stem}-{i}" for i in range(5)]
    for name in names:
        assert create(api, name).status_code == 201
    first = api.ok("GET", "/repositories", params={"prefix": stem, "amount": 2})
    assert [r["id"] for r in first["results"]] == names[:2]
    assert first["pagination"] == {
        "has_more": True,
        "next_offset": names[1],
        "results": 2,
        "max_per_page": 1000,
    }
    after = first["pagination"]["next_offset"]
    rest = api.ok("GET", "/repositories", params={"prefix": stem, "after": after, "amount": 3})
    assert [r["id"] for r in rest["results"]] == names[2:]
    assert rest["pagination"]["has_more"] is False and rest["pagination"]["next_offset"] == ""
    empty = api.ok("GET", "/repositories", params={"prefix": stem, "after": names[-1]})
    assert empty["results"] == [] and empty["pagination"]["results"] == 0
    default = api.ok("GET", "/repositories", params={"prefix": stem, "amount": 0})
    assert len(default["results"]) == 5  # below 1 means the default page (100)
    searched = api.ok("GET", "/repositories", params={"search": f"{stem}-3"})
    assert [r["id"] for r in searched["results"]] == [names[3]]


@pytest.mark.parametrize("amount", ["1001", "-2", "ten", "1.5"])
def test_bad_amounts_are_400(api: Api, amount: str) -> None:
    error_of(api.get("/repositories", params={"amount": amount}, validate=False), 400)


def test_scoped_key_sees_only_its_repositories(server: Server, api: Api, repo: str) -> None:
    for name in SCOPED:
        if api.get(f"/repositories/{name}").status_code == 404:
            assert create(api, name).status_code == 201
    scoped = server.api(server.scoped)
    listed = [
        r["id"] for r in scoped.ok("GET", "/repositories", params={"amount": 1000})["results"]
    ]
    assert sorted(listed) == sorted(SCOPED)
    assert scoped.ok("GET", f"/repositories/{SCOPED[0]}")["id"] == SCOPED[0]
    error_of(scoped.get(f"/repositories/{repo}"), 403)
    error_of(scoped.get(f"/repositories/{repo}/branches"), 403)
    error_of(scoped.get(f"/repositories/{unique()}"), 403)  # existing or not: no hint


def test_sample_data(api: Api) -> None:
    name = unique("sample")
    assert create(api, name, sample_data=True).status_code == 201
    listing = api.ok("GET", f"/repositories/{name}/refs/main/objects/ls", params={"amount": 1000})
    paths = {o["path"] for o in listing["results"]}
    assert {"README.md", "lakes.parquet", "data/lakes.source.md"} <= paths
    assert len([p for p in paths if p.startswith("images/")]) == 29
    table = api.get(f"/repositories/{name}/refs/main/objects", params={"path": "lakes.parquet"})
    assert table.status_code == 200 and len(table.content) >= 1 << 19
    lakes = pq.read_table(io.BytesIO(table.content))
    assert lakes.num_rows > 1000 and "name" in lakes.column_names
    log = api.ok("GET", f"/repositories/{name}/refs/main/commits")["results"]
    assert log[0]["message"] == "Add sample data"
    rules = api.ok("GET", f"/repositories/{name}/settings/branch_protection")
    assert rules == [{"pattern": "main"}]


def test_metadata(api: Api, repo: str) -> None:
    assert api.ok("GET", f"/repositories/{repo}/metadata") == {}
    response = api.post(f"/repositories/{repo}/metadata", json={"metadata": {"team": "lake"}})
    assert response.status_code == 204
    assert api.ok("GET", f"/repositories/{repo}/metadata") == {"team": "lake"}
    response = api.delete(f"/repositories/{repo}/metadata", json={"keys": ["team"]})
    assert response.status_code == 204
    assert api.ok("GET", f"/repositories/{repo}/metadata") == {}


def test_branch_protection_rules(api: Api) -> None:
    name = unique()
    assert create(api, name).status_code == 201
    base = f"/repositories/{name}/settings/branch_protection"
    first = api.get(base)
    assert first.json() == [] and first.headers["etag"]
    response = api.put(base, json=[{"pattern": "stable_*"}], headers={"If-Match": "stale"})
    error_of(response, 412)
    response = api.put(
        base, json=[{"pattern": "stable_*"}], headers={"If-Match": first.headers["etag"]}
    )
    assert response.status_code == 204
    assert api.get(base).json() == [{"pattern": "stable_*"}]
    branches = f"/repositories/{name}/branches"
    api.ok("POST", branches, 201, json={"name": "stable_1", "source": "main"})
    api.ok("POST", branches, 201, json={"name": "dev", "source": "main"})
    error_of(
        api.post(
            f"/repositories/{name}/branches/stable_1/objects",
            params={"path": "x"},
            data=b"x",
            headers={"Content-Type": "application/octet-stream"},
        ),
        403,
    )
    upload(api, name, "dev", "x", b"x")
    api.ok("POST", f"/repositories/{name}/branches/dev/commits", 201, json={"message": "x"})
    merged = api.post(f"/repositories/{name}/refs/dev/merge/stable_1", json={})
    assert merged.status_code == 200  # a protected branch takes merges
    assert api.put(base, json=[]).status_code == 204
    upload(api, name, "stable_1", "y", b"y")


def test_legacy_branch_protection_endpoints(api: Api) -> None:
    name = unique()
    assert create(api, name).status_code == 201
    base = f"/repositories/{name}/branch_protection"
    assert api.post(base, json={"pattern": "main"}).status_code == 204
    error_of(api.post(base, json={"pattern": "main"}), 409)
    assert api.get(base).json() == [{"pattern": "main"}]
    assert api.delete(base, json={"pattern": "main"}).status_code == 204
    error_of(api.delete(base, json={"pattern": "main"}), 404)
    error_of(api.post(base, json={"pattern": ""}, validate=False), 400)


def test_refs_dumps_are_not_implemented(api: Api, repo: str) -> None:
    error_of(api.post(f"/repositories/{repo}/dump"), 501)


def test_gc_rules_are_kept_with_the_repository(server: Server, api: Api) -> None:
    """lakectl gc set-config / get-config / delete-config; ``graveler gc`` uses the kept
    rules when it is given none."""
    name = unique()
    assert create(api, name).status_code == 201
    url = f"/repositories/{name}/settings/gc_rules"
    error_of(api.get(url), 404)
    rules = {
        "default_retention_days": 14,
        "branches": [{"branch_id": "main", "retention_days": 30}],
    }
    assert api.put(url, json=rules).status_code == 204
    assert api.ok("GET", url) == rules
    assert api.ok("GET", f"/repositories/{name}/gc/rules") == rules  # the internal spelling
    assert api.get(f"/repositories/{name}/gc/rules/set_allowed").status_code == 204
    error_of(server.api(server.reader).get(f"/repositories/{name}/gc/rules/set_allowed"), 403)
    error_of(server.api(server.reader).put(url, json=rules), 403)
    for bad in (
        {"default_retention_days": 1.5, "branches": []},
        {"default_retention_days": -1, "branches": []},
        {"default_retention_days": 1, "branches": [{"branch_id": "bad name", "retention_days": 1}]},
    ):
        error_of(api.put(url, json=bad, validate=False), 400)
    assert api.ok("GET", url) == rules  # unchanged
    kept = server.served.cli("--json", "gc-rules", "get", f"graveler://{name}").stdout
    assert json.loads(kept) == rules  # what graveler gc runs with (tests/cli)
    assert api.delete(url).status_code == 204
    error_of(api.get(url), 404)
