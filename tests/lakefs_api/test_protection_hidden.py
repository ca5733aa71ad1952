"""Branch protection rules and hidden branches through lakeFS's API, and the same rules and
branches as the other interfaces (the CLI, the S3 gateway) see them: a rule set here protects
a branch the CLI makes later. This API refuses with lakeFS's own messages (its clients match
them); the CLI and the S3 gateway name the rule."""

from __future__ import annotations

from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.lakefs_api.conftest import Api, Server, commit, error_of, unique, upload


def new_repo(api: Api) -> str:
    name = unique()
    body = {"name": name, "storage_namespace": f"local://{name}"}
    api.ok("POST", "/repositories", 201, json=body)
    return name


def test_a_rule_protects_a_branch_the_cli_makes_later(
    server: Server, api: Api, tmp_path: Path
) -> None:
    repo = new_repo(api)
    rules = f"/repositories/{repo}/settings/branch_protection"
    assert api.put(rules, json=[{"pattern": "release-*"}]).status_code == 204
    server.served.cli(
        "branch", "create", f"graveler://{repo}/release-1", "--source", f"graveler://{repo}/main"
    )
    refused = error_of(
        api.post(
            f"/repositories/{repo}/branches/release-1/objects",
            params={"path": "x"},
            data=b"x",
            headers={"Content-Type": "application/octet-stream"},
        ),
        403,
    )
    assert refused == "cannot write to protected branch"
    commit_refused = api.post(
        f"/repositories/{repo}/branches/release-1/commits", json={"message": "m"}
    )
    assert error_of(commit_refused, 403) == "cannot commit to protected branch"
    reset = api.put(f"/repositories/{repo}/branches/release-1", json={"type": "reset"})
    error_of(reset, 403)
    local = tmp_path / "x.txt"
    local.write_bytes(b"x")
    cli = server.served.cli(
        "fs", "upload", str(local), f"graveler://{repo}/release-1/x", check=False
    )
    assert cli.returncode != 0 and "release-*" in cli.stderr  # the CLI refuses, naming the rule
    upload(api, repo, "main", "a", b"a")
    commit(api, repo, "main")
    merged = api.post(f"/repositories/{repo}/refs/main/merge/release-1", json={})
    assert merged.status_code == 200, merged.text


def test_the_s3_gateway_refuses_what_a_rule_blocks(server: Server, api: Api) -> None:
    repo = new_repo(api)
    api.ok("POST", f"/repositories/{repo}/branches", 201, json={"name": "prod", "source": "main"})
    api.ok("POST", f"/repositories/{repo}/branch_protection", 204, json={"pattern": "pro?"})
    key = server.admin
    s3 = boto3.client(
        "s3",
        endpoint_url=server.served.url,
        aws_access_key_id=key.access_key_id,
        aws_secret_access_key=key.secret_access_key,
        region_name="us-east-1",
    )
    with pytest.raises(ClientError) as refused:
        s3.put_object(Bucket=repo, Key="prod/a.csv", Body=b"1")
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    assert "pro?" in refused.value.response["Error"]["Message"]
    s3.put_object(Bucket=repo, Key="main/a.csv", Body=b"1")


def test_a_delete_rule_made_with_the_cli_holds_in_the_api(server: Server, api: Api) -> None:
    repo = new_repo(api)
    api.ok("POST", f"/repositories/{repo}/branches", 201, json={"name": "keep", "source": "main"})
    server.served.cli("branch-protect", "add", f"graveler://{repo}", "keep", "--block", "delete")
    assert "keep" in error_of(api.delete(f"/repositories/{repo}/branches/keep"), 403)
    rules = api.get(f"/repositories/{repo}/settings/branch_protection")
    assert rules.json() == [{"pattern": "keep"}]
    # Replacing the rules with the same pattern keeps what the rule blocks.
    replace = api.put(
        f"/repositories/{repo}/settings/branch_protection",
        json=[{"pattern": "keep"}, {"pattern": "other"}],
        headers={"If-Match": rules.headers["etag"]},
    )
    assert replace.status_code == 204
    listed = server.served.cli("--json", "branch-protect", "list", f"graveler://{repo}").stdout
    assert '"delete"' in listed and '"other"' in listed
    upload(api, repo, "keep", "a", b"writes are not blocked by a delete rule")
    error_of(api.post(f"/repositories/{repo}/branch_protection", json={"pattern": "keep"}), 409)
    api.ok("DELETE", f"/repositories/{repo}/branch_protection", 204, json={"pattern": "keep"})
    assert api.delete(f"/repositories/{repo}/branches/keep").status_code == 204


def test_hidden_branches(server: Server, api: Api) -> None:
    repo = new_repo(api)
    branches = f"/repositories/{repo}/branches"
    body = {"name": "tx-hidden", "source": "main", "hidden": True}
    assert api.post(branches, json=body).status_code == 201
    api.ok("POST", branches, 201, json={"name": "shown", "source": "main"})
    listed = api.ok("GET", branches)["results"]
    assert [b["id"] for b in listed] == ["main", "shown"]
    everything = api.ok("GET", branches, params={"show_hidden": "true"})["results"]
    assert [b["id"] for b in everything] == ["main", "shown", "tx-hidden"]
    assert api.ok("GET", f"{branches}/tx-hidden")["id"] == "tx-hidden"
    upload(api, repo, "tx-hidden", "a", b"a")
    commit(api, repo, "tx-hidden")
    cli = server.served.cli("--json", "branch", "list", f"graveler://{repo}").stdout
    assert "tx-hidden" not in cli and "shown" in cli
    cli_all = server.served.cli(
        "--json", "branch", "list", f"graveler://{repo}", "--show-hidden"
    ).stdout
    assert '"hidden": true' in cli_all
    error_of(api.post(branches, json={**body, "name": "x1", "hidden": "yes"}, validate=False), 400)


def test_the_s3_gateway_lists_no_hidden_branch(server: Server, api: Api) -> None:
    repo = new_repo(api)
    branches = f"/repositories/{repo}/branches"
    api.ok("POST", branches, 201, json={"name": "tx-x", "source": "main", "hidden": True})
    key = server.admin
    s3 = boto3.client(
        "s3",
        endpoint_url=server.served.url,
        aws_access_key_id=key.access_key_id,
        aws_secret_access_key=key.secret_access_key,
        region_name="us-east-1",
    )
    listed = s3.list_objects_v2(Bucket=repo, Delimiter="/")
    assert [p["Prefix"] for p in listed.get("CommonPrefixes", [])] == ["main/"]
