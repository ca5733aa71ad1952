"""The UI in a real browser: Debian's headless Chromium, driven by Playwright, against the app
served by uvicorn on a loopback port. It browses repositories -> branches -> log -> a commit
-> a comparison -> object previews, pages a listing on with htmx, and merges through the
CSRF-protected form. Any console error (a script failing, a CSP violation, a missing asset)
fails the test.

``GRAVELER_UI_SCREENSHOTS=DIR`` saves a screenshot of each main page into DIR (that is how
docs/ui/*.png are made). One browser per module; the Chromium flags keep it off the network.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect, sync_playwright

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.server.listen import UIServer, allowed_hosts
from graveler.server.ui import UIOptions, create_app
from tests.ui import sample

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
#: Headless as root, and no traffic beyond the test server (no updates, sync or metrics).
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--disable-domain-reliability",
    "--metrics-recording-only",
    "--no-first-run",
    "--no-default-browser-check",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
SHOTS = os.environ.get("GRAVELER_UI_SCREENSHOTS")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Repository]]:
    """Two servers over one fresh sample: read-write with the usual page sizes, and
    read-only with two rows a page (for paging)."""
    gv = Graveler(home=tmp_path_factory.mktemp("ui-browser"))
    lake = sample.build(gv)
    hosts = allowed_hosts("127.0.0.1")
    main = UIServer(
        create_app(gv, UIOptions(allow_writes=True), allowed_hosts=hosts), "127.0.0.1", 0
    )
    small = UIServer(create_app(gv, UIOptions(page_size=2), allowed_hosts=hosts), "127.0.0.1", 0)
    try:
        yield main.start(), small.start(), lake
    finally:
        main.stop()
        small.stop()
        gv.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium (as root)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 760})
    tab = context.new_page()
    problems: list[str] = []
    tab.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: problems.append(str(e)))
    tab.set_default_timeout(20_000)
    yield tab
    context.close()
    assert problems == []


def shot(page: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def test_browse_commit_compare_and_preview(page: Any, site: tuple[str, str, Repository]):
    base, _, lake = site
    page.goto(base + "/")
    shot(page, "repositories")
    page.get_by_role("link", name="lake", exact=True).first.click()
    row = page.locator("tr[data-branch='main']")
    assert "protected" in row.inner_text()
    running = page.locator(f"tr[data-branch='{sample.run_branch('2026-11-05', 2)}']")
    assert "Airflow: orders-scheduled__2026-11-05" in running.inner_text()
    assert "<img-src" in page.locator("tr[data-branch^='fix/']").inner_text()  # shown as text
    shot(page, "branches")

    page.get_by_role("link", name="Log", exact=True).click()
    assert page.locator("tr.lane0").count() == 4 and page.locator("tr.lane1").count() == 4
    shot(page, "log")
    merge = lake.resolve("main").commit
    page.locator(f"tr.lane0 a[title='{merge.id}']").click()
    page.wait_for_url(f"**/commits/{merge.id}")
    link = page.get_by_role("link", name=sample.AIRFLOW_LINK)
    assert link.get_attribute("href") == sample.AIRFLOW_LINK
    assert page.locator("tr.change").count() == 3
    shot(page, "commit")

    page.get_by_role("link", name="Compare", exact=True).click()
    page.fill("input[name=left]", "main~2")
    page.fill("input[name=right]", "main")
    page.get_by_role("button", name="Compare").click()
    totals = page.locator("#summary .totals").inner_text()
    assert totals.startswith("5 changes") and "+5" in totals
    shot(page, "compare")
    page.locator("table.groups").get_by_role("link", name="tables/").click()
    assert page.locator("tr.change").count() == 3  # only the tables/ prefix

    page.get_by_role("link", name="part-2026-11-04.parquet").click()
    schema = page.locator("table.schema")  # the preview loads through htmx
    assert "order_id" in schema.inner_text() and "int64" in schema.inner_text()
    assert page.locator("table.facts").last.inner_text().startswith("Rows\t41")
    shot(page, "object-parquet")

    page.get_by_role("link", name="Objects", exact=True).click()
    page.get_by_role("link", name="raw/").click()
    page.get_by_role("link", name="orders/").click()
    page.get_by_role("link", name="2026-11-01.csv").click()
    assert "carol" in page.locator("table.data").inner_text()
    shot(page, "object-csv")

    page.goto(base + "/repos/lake/object?ref=main&path=images/logo.png")
    image = page.locator("section.preview img")
    image.wait_for()
    assert page.evaluate("el => el.naturalWidth", image.element_handle()) == 1


def test_uncommitted_changes_page(page: Any, site: tuple[str, str, Repository]):
    base, _, _ = site
    page.goto(base + "/repos/lake")
    page.locator("tr[data-branch^='fix/'] td.staged a").click()
    kinds = page.locator("tr.change td.kind").all_inner_texts()
    assert [k.lower() for k in kinds] == ["removed", "added", "changed"]
    shot(page, "uncommitted")


def test_listings_page_on_in_place(page: Any, site: tuple[str, str, Repository]):
    _, small, lake = site
    page.goto(small + "/repos/lake/tree?ref=main")
    url = page.url
    rows = page.locator("table.objects tbody:not(.more-row) tr")
    assert page.locator("a.more").count() == 1  # more than one page: htmx pages on
    while page.locator("a.more").count():
        before = rows.count()
        page.locator("a.more").click()
        expect(rows).not_to_have_count(before)  # polled by Playwright (the CSP forbids eval)
    assert page.url == url  # rows were appended, the page never left
    shown = rows.locator("td:first-child").all_inner_texts()
    listing = lake.list("main", "", amount=100)
    expected = [p.rstrip("/") + "/" for p in listing.common_prefixes]
    expected += [o.path for o in listing.objects]
    assert sorted(shown) == sorted(expected) and len(shown) == len(expected)


def test_merge_through_the_form(page: Any, site: tuple[str, str, Repository]):
    base, _, lake = site
    lake.create_branch("feature", "main")
    lake.put("feature", "raw/extra.csv", b"a\n1\n")
    lake.commit("feature", "add an extra file")
    page.goto(base + "/repos/lake/compare?left=main&right=feature")
    page.get_by_text("Merge feature into main").click()
    page.get_by_role("button", name="Merge").click()
    page.wait_for_url("**/commits/*")
    head = lake.resolve("main").commit
    assert head.id in page.url and head.message == "Merge 'feature' into 'main'"
    assert head.parents[1] == lake.resolve("feature").commit.id
