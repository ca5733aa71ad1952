"""The UI's security: user text escaped on every page, no path traversal, object bytes that
cannot run in the UI's origin, security headers, host checking, and errors that show no
internals or secrets."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from graveler.client import Graveler
from graveler.server.ui import Links, create_app, templating
from tests.ui import sample
from tests.ui.html import elements, links

ESCAPED = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"


def _pages(lake_head: str) -> list[str]:
    to = Links()
    return [
        to.branches("lake"),
        to.log("lake", "main"),
        to.log("lake", sample.XSS_BRANCH),
        to.commit("lake", lake_head),
        to.compare("lake", "main~3", "main"),
        to.compare("lake", "main", sample.XSS_BRANCH),
        to.changes("lake", sample.XSS_BRANCH),
        to.tree("lake", "main", "notes/"),
        to.object("lake", "main", sample.XSS_KEY),
        to.preview("lake", "main", sample.XSS_KEY),
        to.tree("lake", sample.XSS, sample.XSS),  # an error page quoting both
    ]


def _unescaped(body: str) -> list[str]:
    """The markup of the sample's hostile strings found raw in ``body``."""
    raw = ["<script>alert", "<img-src=x-onerror"]
    return [r for r in raw if r in body]


def test_user_text_is_escaped_on_every_page(http: TestClient, shared_lake):
    head = shared_lake.log("main", first_parent=True)
    first = list(head)[-2].id  # "Load raw orders <script>..." with hostile metadata
    for url in _pages(first):
        body = http.get(url).text
        assert not _unescaped(body), url
    commit = http.get(Links().commit("lake", first)).text
    assert commit.count(ESCAPED) >= 3  # message, metadata key and value
    branches = http.get(Links().branches("lake")).text
    assert "fix/&lt;img-src=x-onerror=alert(1)&gt;" in branches


def test_the_escaping_check_catches_raw_markup(shared_gv: Graveler, shared_lake, monkeypatch):
    """Without autoescaping the same pages leak the markup: the test above can fail."""
    monkeypatch.setattr(templating, "AUTOESCAPE", False)
    leaky = TestClient(create_app(shared_gv))
    first = list(shared_lake.log("main", first_parent=True))[-2].id
    assert _unescaped(leaky.get(Links().commit("lake", first)).text)
    assert _unescaped(leaky.get(Links().branches("lake")).text)


def test_only_http_urls_in_metadata_become_links(http: TestClient, shared_lake):
    first = list(shared_lake.log("main", first_parent=True))[-2].id
    page = http.get(Links().commit("lake", first)).text
    assert "javascript:alert(1)" in page  # shown as text
    assert not [h for h in links(page).values() if h.lower().startswith("javascript")]


def test_object_bytes_never_render_in_the_ui_origin(http: TestClient):
    html = http.get(Links().raw("lake", "main", "site/page.html"))
    assert html.headers["content-type"] == "application/octet-stream"
    assert html.headers["content-disposition"].startswith("attachment;")
    assert "sandbox" in html.headers["content-security-policy"]
    assert html.headers["x-content-type-options"] == "nosniff"
    image = http.get(Links().raw("lake", "main", "images/logo.png"))
    assert image.headers["content-disposition"].startswith("inline;")
    assert "sandbox" in image.headers["content-security-policy"]
    hostile = http.get(Links().raw("lake", "main", sample.HEADER_KEY, download=True))
    assert "x-injected" not in hostile.headers
    disposition = hostile.headers["content-disposition"]  # quotes and line breaks replaced
    assert disposition.startswith('attachment; filename="say _hi___X-Injected: 1.txt"')


@pytest.mark.parametrize(
    "url",
    [
        "/static/../app.py",
        "/static/%2e%2e/app.py",
        "/static/..%2fapp.py",
        "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/static//etc/passwd",
        "/repos/..%2f..%2fetc/branches",
    ],
)
def test_no_path_traversal_through_static_files(http: TestClient, url: str):
    page = http.get(url)
    assert page.status_code == 404
    assert "root:" not in page.text and "create_app" not in page.text


def test_object_paths_are_keys_not_file_paths(http: TestClient):
    for path in ("../../../../etc/passwd", "/etc/passwd", "..\\..\\app.py"):
        for url in (Links().object("lake", "main", path), Links().raw("lake", "main", path)):
            page = http.get(url)
            assert page.status_code == 404 and "root:" not in page.text


def test_pages_carry_security_headers_and_load_nothing_from_elsewhere(http: TestClient):
    page = http.get(Links().commit("lake", "main"))
    csp = page.headers["content-security-policy"]
    for rule in ("script-src 'self'", "frame-ancestors 'self'", "form-action 'self'"):
        assert rule in csp
    sources = [a.get("src", "") for a, _ in elements(page.text, "script")]
    sources += [a.get("href", "") for a, _ in elements(page.text, "link")]
    assert sources and all(s.startswith("/static/") for s in sources)
    assert http.get(sources[0]).status_code == 200


def test_a_loopback_server_refuses_foreign_host_names(shared_gv: Graveler):
    app = create_app(shared_gv, allowed_hosts=["127.0.0.1", "localhost"])
    local = TestClient(app, base_url="http://127.0.0.1:8765")
    assert local.get("/").status_code == 200
    rebound = TestClient(app, base_url="http://attacker.example:8765")
    assert rebound.get("/").status_code == 400


def test_unexpected_errors_show_no_internals(shared_gv: Graveler, monkeypatch):
    app = create_app(shared_gv)
    secret = "postgresql://graveler:hunter2@db.internal/refs"

    def broken(name: str) -> None:
        raise RuntimeError(f"cannot reach {secret}")

    monkeypatch.setattr(app.state.ui, "repository", broken)
    page = TestClient(app, raise_server_exceptions=False).get(Links().branches("lake"))
    assert page.status_code == 500
    assert "hunter2" not in page.text and "Traceback" not in page.text
    assert "Internal error" in page.text


def test_a_database_password_never_reaches_a_page(tmp_path):
    url = "postgresql+psycopg://graveler:s3cret-pw@127.0.0.1:1/graveler"

    def unreachable() -> Graveler:
        return Graveler(home=tmp_path, database_url=url)

    http = TestClient(create_app(unreachable), raise_server_exceptions=False)
    page = http.get("/")
    assert page.status_code >= 500
    assert "s3cret-pw" not in page.text


def test_graveler_errors_show_their_message(http: TestClient):
    page = http.get(Links().log("lake", "no-such-branch"))
    assert page.status_code == 404 and "no-such-branch" in page.text


def test_read_only_pages_have_no_write_forms(http: TestClient, shared_lake):
    for url in _pages(shared_lake.resolve("main").commit.id):
        assert 'method="post"' not in http.get(url).text, url


def test_read_write_pages_carry_a_token_per_form(writer: TestClient):
    page = writer.get(Links().branches("lake"))
    tokens = {a["value"] for a, _ in elements(page.text, "input") if a.get("name") == "csrf_token"}
    assert len(tokens) == 1 and len(tokens.pop()) == 64
    assert "graveler_csrf" in page.headers["set-cookie"]
    assert "samesite=strict" in page.headers["set-cookie"].lower()
    assert "httponly" in page.headers["set-cookie"].lower()
