"""Set-up, health, configuration and authentication of the lakeFS API, and its answers to
calls it does not serve (unknown paths, other methods, lakeFS's auth service)."""

from __future__ import annotations

import base64
import re

import pytest
import requests

from tests.lakefs_api.conftest import Api, Server, error_of


def test_healthcheck_needs_no_key(server: Server) -> None:
    response = server.anonymous().get("/healthcheck")
    assert response.status_code == 204 and response.content == b""


def test_config_reports_version_and_storage(api: Api) -> None:
    doc = api.ok("GET", "/config")
    version = doc["version_config"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version  # lakefs-spec parses it so
    storage = doc["storage_config"]
    assert storage["blockstore_type"] == "local"
    assert storage["default_namespace_prefix"] == "local://"
    assert storage["import_support"] is True
    assert storage["pre_sign_support"] is False
    assert api.ok("GET", "/config/version")["version"] == version
    assert api.ok("GET", "/config/storage")["blockstore_type"] == "local"


def test_config_needs_a_key(server: Server) -> None:
    error_of(server.anonymous().get("/config"), 401)


def test_setup_state_is_initialized(server: Server) -> None:
    doc = server.anonymous().ok("GET", "/setup_lakefs")
    assert doc["state"] == "initialized"


def test_setup_again_is_a_conflict(server: Server) -> None:
    anonymous = server.anonymous()
    assert "already" in error_of(anonymous.post("/setup_lakefs", json={"username": "admin"}), 409)
    error_of(anonymous.post("/setup_lakefs", json={"username": ""}), 400)


def test_login_token_as_bearer_and_cookie(server: Server) -> None:
    key = server.admin
    login = server.anonymous().post(
        "/auth/login",
        json={"access_key_id": key.access_key_id, "secret_access_key": key.secret_access_key},
    )
    assert login.status_code == 200
    token = login.json()["token"]
    assert login.json()["token_expiration"] > 0
    assert "internal_auth_session=" in login.headers["set-cookie"]
    bearer = server.anonymous()
    user = bearer.ok("GET", "/user", headers={"Authorization": f"Bearer {token}"})
    assert user["user"]["id"] == key.access_key_id
    jar = server.anonymous()
    jar.session.cookies.update(login.cookies)
    assert jar.ok("GET", "/user")["user"]["id"] == key.access_key_id


def test_login_with_a_wrong_secret_is_401(server: Server) -> None:
    response = server.anonymous().post(
        "/auth/login",
        json={"access_key_id": server.admin.access_key_id, "secret_access_key": "wrong"},
    )
    error_of(response, 401)


@pytest.mark.parametrize(
    "header",
    [
        "Basic " + base64.b64encode(b"GRVLNOSUCHKEY:secret").decode(),
        "Basic !!!not-base64!!!",
        "Bearer not.a-token",
        "Digest something",
    ],
)
def test_bad_credentials_are_401(server: Server, header: str) -> None:
    response = server.anonymous().get("/repositories", headers={"Authorization": header})
    assert "error authenticating request" in error_of(response, 401)


def test_user_is_the_key(server: Server) -> None:
    doc = server.api(server.reader).ok("GET", "/user")
    assert doc["user"]["id"] == server.reader.access_key_id
    assert doc["user"]["creation_date"] > 0


def test_own_user_and_credentials(server: Server) -> None:
    api = server.api(server.writer)
    me = server.writer.access_key_id
    assert api.ok("GET", f"/auth/users/{me}")["id"] == me
    listed = api.ok("GET", f"/auth/users/{me}/credentials")
    assert [c["access_key_id"] for c in listed["results"]] == [me]
    assert api.ok("GET", f"/auth/users/{me}/credentials/{me}")["access_key_id"] == me
    assert [u["id"] for u in api.ok("GET", "/auth/users")["results"]] == [me]
    error_of(api.get(f"/auth/users/{server.admin.access_key_id}"), 404)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/auth/groups"),
        ("GET", "/auth/policies"),
        ("POST", "/auth/users/someone/credentials"),
        ("DELETE", "/auth/users/someone/credentials/AKIA"),
        ("GET", "/auth/groups/admins/members"),
    ],
)
def test_auth_management_is_not_implemented(api: Api, method: str, path: str) -> None:
    kwargs = {"json": {"id": "x"}} if method == "POST" else {}
    assert "not implemented" in error_of(api.call(method, path, **kwargs), 501)


def test_users_are_managed_as_lakefs_without_an_auth_service(server: Server) -> None:
    """lakeFS without an external auth service keeps one user: a second is a 409 and deleting
    anyone else a 404 (lakectl prints both messages as they are)."""
    api = server.api(server.writer)
    assert error_of(api.post("/auth/users", json={"id": "someone"}), 409) == "Already exists"
    assert error_of(api.delete("/auth/users/someone"), 404) == "user not found"
    own = api.delete(f"/auth/users/{server.writer.access_key_id}")
    assert "not implemented" in error_of(own, 501)


def test_unknown_paths_are_404_json(api: Api) -> None:
    for path in ("/nope", "/repositories/a/b/c/d/e/f/g", ""):
        response = api.get(path, validate=False)
        assert error_of(response, 404) == "invalid API endpoint"


def test_other_methods_are_405_json(api: Api) -> None:
    response = api.call("PATCH", "/config", validate=False)
    assert "not allowed" in error_of(response, 405)


def test_api_is_never_html(server: Server) -> None:
    browser = {"Accept": "text/html,application/xhtml+xml", "User-Agent": "Mozilla/5.0"}
    root = server.base[: -len("/api/v1")]
    for url in (server.base, server.base + "/", server.base + "/nope", root + "/api/v1/x/y"):
        response = requests.get(url, headers=browser, timeout=10)
        assert error_of(response, 404) == "invalid API endpoint"
    response = requests.get(server.base + "/repositories", headers=browser, timeout=10)
    error_of(response, 401)


def test_keep_alive(api: Api) -> None:
    for _ in range(5):
        assert api.get("/healthcheck").status_code == 204
    assert len(api.session.adapters["http://"].poolmanager.pools) == 1
