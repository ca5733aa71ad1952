"""What lakeFS's clients' own test suites rely on (lakefs-spec's, run whole by
tests/lakefs_clients/test_lakefs_spec_suite.py), each pinned here on its own: lakeFS's exact
messages where a client matches them, and the behaviours those suites found missing."""

from __future__ import annotations

from tests.lakefs_api.conftest import Api, Server, commit, error_of, unique, upload


def _protected_main(api: Api) -> str:
    name = unique("protect")
    api.ok(
        "POST", "/repositories", 201, json={"name": name, "storage_namespace": f"local://{name}"}
    )
    rules = f"/repositories/{name}/settings/branch_protection"
    assert api.put(rules, json=[{"pattern": "main"}]).status_code == 204
    return name


def test_writes_to_a_protected_branch_answer_lakefs_message(api: Api) -> None:
    """lakefs-spec raises ``PermissionError("403 cannot write to protected branch: PATH")``
    from lakeFS's message, and its suite matches the whole text."""
    name = _protected_main(api)
    response = api.post(
        f"/repositories/{name}/branches/main/objects",
        params={"path": "a.txt"},
        data=b"a",
        headers={"Content-Type": "application/octet-stream"},
    )
    assert error_of(response, 403) == "cannot write to protected branch"
    many = api.ok(
        "POST", f"/repositories/{name}/branches/main/objects/delete", json={"paths": ["a"]}
    )
    assert many["errors"] == [
        {"path": "a", "status_code": 403, "message": "cannot write to protected branch"}
    ]


def test_a_commit_on_a_protected_branch_answers_lakefs_message(api: Api) -> None:
    name = _protected_main(api)
    api.ok("POST", f"/repositories/{name}/branches", 201, json={"name": "dev", "source": "main"})
    upload(api, name, "dev", "a.txt", b"a")
    commit(api, name, "dev")
    response = api.post(
        f"/repositories/{name}/branches/main/commits",
        json={"message": "direct", "allow_empty": True},
    )
    assert error_of(response, 403) == "cannot commit to protected branch"


def test_config_names_lakefs_open_source_edition(api: Api) -> None:
    """lakectl 1.84 prints "the connected server appears to be Enterprise" before every
    command's output unless ``version_context`` is ``lakeFS``."""
    for path in ("/config", "/config/version"):
        doc = api.ok("GET", path)
        version = doc["version_config"] if path == "/config" else doc
        assert version["version_context"] == "lakeFS", doc
        assert version["version"] == "1.84.0"


def test_usage_statistics_are_accepted_and_dropped(server: Server, api: Api) -> None:
    """lakectl posts an event for every command it runs (``POST /statistics``)."""
    event = {"class": "lakectl", "name": "fs_ls", "count": 1}
    assert api.post("/statistics", json={"events": [event]}).status_code == 204
    assert api.post("/statistics", json={"events": []}).status_code == 204
    for broken, message in (
        ({**event, "class": ""}, "class is required"),
        ({**event, "name": ""}, "name is required"),
        ({**event, "count": -1}, "count must be a non-negative integer"),
    ):
        answer = api.post("/statistics", json={"events": [broken]})
        assert message in error_of(answer, 400)
    error_of(server.anonymous().post("/statistics", json={"events": [event]}), 401)
