"""Write actions: only with allow_writes, only as a same-origin POST carrying the page's CSRF
token, and within the rules of protected and default branches."""

from __future__ import annotations

from fastapi.testclient import TestClient

from graveler.repository import Repository
from graveler.server.ui import Links
from tests.ui import sample
from tests.ui.html import elements

to = Links()


def _token(http: TestClient, url: str) -> str:
    """The CSRF token of the forms on ``url`` (the visit also sets the cookie)."""
    page = http.get(url)
    (token,) = {a["value"] for a, _ in elements(page.text, "input") if a["name"] == "csrf_token"}
    return token


def _post(http: TestClient, action: str, data: dict[str, str], **headers: str):
    return http.post(to.action("lake", action), data=data, headers=headers, follow_redirects=False)


def test_a_read_only_app_refuses_every_write(http: TestClient, shared_lake: Repository):
    before = {b.name: b.commit_id for b in shared_lake.list_branches()}
    running = sample.run_branch("2026-11-05", 2)
    for action, data in [
        ("merge", {"source": running, "dest": "main"}),
        ("revert", {"commit": "main", "branch": running}),
        ("delete-branch", {"branch": running}),
    ]:
        answer = _post(http, action, {**data, "csrf_token": "x"})
        assert answer.status_code == 403 and "read-only" in answer.text
    assert {b.name: b.commit_id for b in shared_lake.list_branches()} == before


def test_writes_need_the_pages_token_and_cookie(writer: TestClient, lake: Repository):
    dagster = sample.DAGSTER_BRANCH
    data = {"branch": dagster}
    assert _post(writer, "delete-branch", data).status_code == 403  # no cookie, no token
    token = _token(writer, to.branches("lake"))
    assert _post(writer, "delete-branch", data).status_code == 403  # cookie, no token
    wrong = {**data, "csrf_token": "0" * 64}
    assert _post(writer, "delete-branch", wrong).status_code == 403
    signed = {**data, "csrf_token": token}
    cross = _post(writer, "delete-branch", signed, origin="https://evil.example")
    assert cross.status_code == 403 and "another site" in cross.text
    fetched = _post(writer, "delete-branch", signed, **{"sec-fetch-site": "cross-site"})
    assert fetched.status_code == 403
    assert dagster in {b.name for b in lake.list_branches()}
    done = _post(writer, "delete-branch", signed, origin="http://testserver")
    assert done.status_code == 303 and done.headers["location"].endswith(f"deleted={dagster}")
    assert dagster not in {b.name for b in lake.list_branches()}
    assert f"<strong>{dagster}</strong> deleted" in writer.get(done.headers["location"]).text


def test_the_token_of_another_cookie_is_refused(writer: TestClient):
    token = _token(writer, to.branches("lake"))
    writer.cookies.set("graveler_csrf", "a-cookie-the-token-was-not-made-for")
    answer = _post(writer, "delete-branch", {"branch": "x", "csrf_token": token})
    assert answer.status_code == 403


def test_merge_from_the_compare_page(writer: TestClient, lake: Repository):
    source = sample.XSS_BRANCH
    lake.commit(source, "fix the orders")
    page = writer.get(to.compare("lake", "main", source))
    assert f'value="{source}"'.replace("<", "&lt;").replace(">", "&gt;") in page.text
    (token,) = {a["value"] for a, _ in elements(page.text, "input") if a["name"] == "csrf_token"}
    answer = _post(writer, "merge", {"source": source, "dest": "main", "csrf_token": token})
    assert answer.status_code == 303
    head = lake.resolve("main").commit
    assert answer.headers["location"] == to.commit("lake", head.id)
    assert head.parents[1] == lake.resolve(source).commit.id  # protected main takes merges


def test_revert_respects_protection(writer: TestClient, lake: Repository):
    head = lake.resolve("main").commit
    token = _token(writer, to.commit("lake", head.id))
    refused = _post(writer, "revert", {"commit": head.id, "branch": "main", "csrf_token": token})
    assert refused.status_code == 409 and "protected" in refused.text
    assert lake.resolve("main").commit.id == head.id
    lake.create_branch("hotfix", "main")
    done = _post(writer, "revert", {"commit": head.id, "branch": "hotfix", "csrf_token": token})
    assert done.status_code == 303
    reverted = lake.resolve("hotfix").commit
    assert reverted.parents == (head.id,) and reverted.message.startswith("Revert")
    assert [d.path for d in lake.diff("hotfix", head.parents[0])] == []


def test_protected_and_default_branches_are_not_deleted(writer: TestClient, lake: Repository):
    token = _token(writer, to.branches("lake"))
    protected = _post(writer, "delete-branch", {"branch": "main", "csrf_token": token})
    assert protected.status_code == 409 and "protected" in protected.text
    lake.protect_branch("main", False)
    default = _post(writer, "delete-branch", {"branch": "main", "csrf_token": token})
    assert default.status_code == 400 and "default branch" in default.text
    assert "main" in {b.name for b in lake.list_branches()}


def test_write_buttons_only_where_allowed(writer: TestClient):
    page = writer.get(to.branches("lake"))
    forms = [a for a, _ in elements(page.text, "form") if a.get("method") == "post"]
    deletable = {a["value"] for a, _ in elements(page.text, "input") if a.get("name") == "branch"}
    rows = {a["data-branch"] for a, _ in elements(page.text, "tr") if "data-branch" in a}
    assert deletable == rows - {"main"} and len(forms) == len(deletable)  # not protected main
    assert writer.get(to.action("lake", "merge")).status_code == 405
