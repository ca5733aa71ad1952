"""Malformed input in every place a request carries it: path parameters, query parameters
and headers. The answer is always lakeFS's JSON error with a 4xx status, never a 500."""

from __future__ import annotations

import pytest

from graveler.server.lakefs import routes
from graveler.server.lakefs.routing import Body, Route
from tests.lakefs_api.conftest import Api, Server, error_of, unique

ROUTES = routes()
#: Path segments (percent-encoded as sent) no name or ref can be.
SEGMENTS = ["%00", "%FF%FE", "a%2Fb", "x" * 300, "~~^^", "..", "%20", "main%24%40"]


@pytest.fixture(scope="module")
def scratch(api: Api) -> str:
    """A repository of its own: garbage sent to deleting routes may delete it."""
    name = unique("garbage")
    body = {"name": name, "storage_namespace": f"local://{name}"}
    api.ok("POST", "/repositories", 201, json=body)
    return name


def ids(route: Route) -> str:
    return f"{route.method} {route.template}"


def fill(template: str, repo: str, value: str) -> str:
    """``template`` with every parameter but the repository set to ``value``."""
    path = template.replace("{repository}", repo)
    while "{" in path:
        start, end = path.index("{"), path.index("}")
        path = path[:start] + value + path[end + 1 :]
    return path


@pytest.mark.parametrize("route", [r for r in ROUTES if "{" in r.template], ids=ids)
def test_garbage_path_parameters(server: Server, scratch: str, route: Route) -> None:
    api = server.api()
    for value in SEGMENTS:
        for path in (fill(route.template, scratch, value), fill(route.template, value, value)):
            kwargs: dict[str, object] = {"params": {"path": "p", "id": "0" * 20, "ref": "main"}}
            if route.body is Body.JSON:
                kwargs["json"] = {}
            response = api.call(route.method, path, validate=False, **kwargs)
            assert response.status_code < 500 or response.status_code == 501, (
                path,
                response.status_code,
                response.text,
            )
            if response.status_code >= 400 and route.method != "HEAD":
                error_of(response, response.status_code)


QUERIES = [
    {"amount": "x"},
    {"amount": "99999999999999999999999"},
    {"after": "\x00"},
    {"prefix": "\x00"},
    {"delimiter": "\x00"},
    {"presign": "perhaps"},
    {"user_metadata": "2"},
    {"since": "yesterday"},
    {"type": "one_dot"},
    {"path": "\x00"},
    {"path": "x" * 5000},
    {"objects": ["", "\x00"]},
    {"parts": "-1"},
]


@pytest.mark.parametrize("route", [r for r in ROUTES if r.method in ("GET", "HEAD")], ids=ids)
def test_garbage_queries(server: Server, scratch: str, route: Route) -> None:
    api = server.api()
    path = fill(route.template, scratch, "main")
    for query in QUERIES:
        response = api.call(route.method, path, validate=False, params=query)
        assert response.status_code < 500 or response.status_code == 501, (
            path,
            query,
            response.status_code,
            response.text,
        )


def test_garbage_headers(server: Server, scratch: str) -> None:
    repo = scratch
    api = server.api()
    url = f"/repositories/{repo}/refs/main/objects"
    for headers in (
        {"Range": "bytes=99999999999999999999999-"},
        {"Range": "bytes=" + "1-2," * 500},
        {"If-None-Match": "\x7f"},
    ):
        response = api.get(url, params={"path": "README.md"}, headers=headers, validate=False)
        assert response.status_code < 500, (headers, response.status_code, response.text)
    upload = f"/repositories/{repo}/branches/main/objects"
    for headers in (
        {"Content-Type": "multipart/form-data"},  # no boundary
        {"Content-Type": "multipart/form-data; boundary=x"},  # not a form
        {"If-None-Match": "etag"},
        {"Content-Length": "5"},
    ):
        response = api.post(
            upload, params={"path": "g"}, data=b"abc", headers=headers, validate=False
        )
        assert 400 <= response.status_code < 500, (headers, response.status_code, response.text)
