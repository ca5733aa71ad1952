"""Key scopes on every operation served: a read-only key writes nothing, a key limited to
some repositories reaches no other one (not even to learn it exists), only admin keys
create or delete repositories, and no operation but the public ones runs without a key.
The routes come from the server's own table, so a new operation is covered when added."""

from __future__ import annotations

import pytest
import requests

from graveler.server.lakefs import routes
from graveler.server.lakefs.routing import Access, Body, Route
from tests.lakefs_api.conftest import Api, Server, error_of, unique

ROUTES = routes()


def url_of(route: Route, repo: str) -> str:
    params = {"repository": repo, "branch": "main", "ref": "main", "sourceRef": "main"}
    path = route.template
    for name in ("repository", "branch", "ref", "sourceRef"):
        path = path.replace("{" + name + "}", params[name])
    while "{" in path:
        start, end = path.index("{"), path.index("}")
        path = path[:start] + "x" + path[end + 1 :]
    return path


def send(api: Api, route: Route, repo: str) -> requests.Response:
    kwargs: dict[str, object] = {"params": {"path": "p", "id": "0" * 20, "dest_path": "q"}}
    if route.body is Body.JSON:
        kwargs["json"] = {}
    elif route.body is Body.UPLOAD:
        kwargs["data"] = b"bytes"
    return api.call(route.method, url_of(route, repo), validate=False, **kwargs)


def refused(response: requests.Response, status: int) -> None:
    """A refusal with ``status``: lakeFS's JSON error, or no body at all for HEAD."""
    if response.request.method == "HEAD":
        assert response.status_code == status and response.content == b""
    else:
        error_of(response, status)


def ids(route: Route) -> str:
    return f"{route.method} {route.template}"


@pytest.mark.parametrize("route", [r for r in ROUTES if r.access is Access.WRITE], ids=ids)
def test_read_only_keys_write_nothing(server: Server, repo: str, route: Route) -> None:
    reader = server.api(server.reader)
    response = send(reader, route, repo)
    refused(response, 403)
    assert "read-only" in response.json()["message"]


@pytest.mark.parametrize(
    "route", [r for r in ROUTES if r.access in (Access.READ, Access.WRITE)], ids=ids
)
def test_scoped_keys_reach_no_other_repository(server: Server, repo: str, route: Route) -> None:
    scoped = server.api(server.scoped)
    refused(send(scoped, route, repo), 403)


@pytest.mark.parametrize("route", [r for r in ROUTES if r.access is Access.ADMIN], ids=ids)
def test_admin_routes_need_admin_keys(server: Server, repo: str, route: Route) -> None:
    for key in (server.writer, server.reader, server.scoped):
        refused(send(server.api(key), route, repo), 403)


@pytest.mark.parametrize("route", [r for r in ROUTES if r.access is not Access.PUBLIC], ids=ids)
def test_no_key_no_call(server: Server, repo: str, route: Route) -> None:
    refused(send(server.anonymous(), route, repo), 401)


def test_refusals_change_nothing(server: Server, api: Api) -> None:
    repo = unique()
    body = {"name": repo, "storage_namespace": f"local://{repo}"}
    api.ok("POST", "/repositories", 201, json=body)
    before = api.ok("GET", f"/repositories/{repo}/branches/main")
    for key in (server.reader, server.scoped):
        keyed = server.api(key)
        for route in ROUTES:
            if route.access in (Access.WRITE, Access.ADMIN):
                send(keyed, route, repo)
    assert api.ok("GET", f"/repositories/{repo}/branches/main") == before
    assert api.ok("GET", f"/repositories/{repo}/branches/main/diff")["results"] == []
    assert api.ok("GET", f"/repositories/{repo}")["id"] == repo


def test_refusals_follow_the_document(server: Server, repo: str) -> None:
    reader = server.api(server.reader)
    url = f"/repositories/{repo}/branches/main/objects"
    error_of(reader.post(url, params={"path": "p"}, data=b"x"), 403)  # validated: 403 allowed
    error_of(server.anonymous().get(f"/repositories/{repo}"), 401)


GARBAGE: list[object] = [None, [], "text", 7, {"unexpected": [1, {"a": None}]}]


@pytest.mark.parametrize("route", [r for r in ROUTES if r.body is Body.JSON], ids=ids)
def test_bad_bodies_are_client_errors(server: Server, repo: str, route: Route) -> None:
    """Whatever a body holds, the answer is lakeFS's JSON error with a 4xx status (501 where
    the operation is not served), never a 500 or HTML."""
    api = server.api()
    url = url_of(route, repo)
    params = {"path": "p", "id": "0" * 20, "dest_path": "q"}
    answers = [
        api.call(route.method, url, validate=False, params=params, json=doc) for doc in GARBAGE
    ]
    answers.append(api.call(route.method, url, validate=False, params=params, data=b"{not json"))
    for response in answers:
        if response.request.body == b"[]" and route.template.endswith("branch_protection"):
            continue  # an empty list of rules is a valid body: no rules
        assert 400 <= response.status_code < 500 or response.status_code == 501, (
            response.status_code,
            response.text,
        )
        error_of(response, response.status_code)
