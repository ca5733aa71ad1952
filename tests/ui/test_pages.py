"""The UI's pages over HTTP: repositories, branches, the log graph, commits, comparisons,
the object browser with previews, uncommitted changes, paging, and error pages."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi.testclient import TestClient

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.server.ui import Links, UIOptions, create_app
from graveler.storage.entry import ObjectEntry
from tests.ui import sample
from tests.ui.html import elements, links


def test_repositories_page_lists_each_repository(gv: Graveler):
    gv.create_repository("lake")
    gv.create_repository("second-lake")
    page = TestClient(create_app(gv)).get("/")
    assert page.status_code == 200
    names = {text for _, text in elements(page.text, "a") if text in ("lake", "second-lake")}
    assert names == {"lake", "second-lake"}


def test_branches_show_head_staged_protection_last_commit_and_runs(
    http: TestClient, shared_lake: Repository
):
    page = http.get("/repos/lake")
    rows = {a["data-branch"]: text for a, text in elements(page.text, "tr") if "data-branch" in a}
    main = shared_lake.branch("main")
    assert set(rows) == {b.name for b in shared_lake.list_branches()}
    assert "protected" in rows["main"] and "default" in rows["main"]
    assert main.commit_id[:12] in rows["main"]
    assert "Merge run scheduled__2026-11-04 of orders" in rows["main"]
    running = sample.run_branch("2026-11-05", 2)
    assert "Airflow: orders-scheduled__2026-11-05" in rows[running]  # a run with no commit yet
    assert "Dagster: 8c1f2a6e" in rows[sample.DAGSTER_BRANCH]
    staged = {a["href"]: t for a, t in elements(page.text, "a") if "/changes?" in a["href"]}
    assert staged[Links().changes("lake", sample.XSS_BRANCH)] == "3"  # 2 puts, 1 delete
    assert staged[Links().changes("lake", running)] == "1"
    assert "protected" in rows["main"]
    assert all("protected" not in text for name, text in rows.items() if name != "main")


def test_log_draws_first_parents_with_merged_commits_beside(
    http: TestClient, shared_lake: Repository
):
    page = http.get("/repos/lake/log", params={"ref": "main"})
    rows = [(a["class"], text) for a, text in elements(page.text, "tr") if "lane" in a["class"]]
    lanes = [cls.split()[0] for cls, _ in rows]
    assert lanes == ["lane0", "lane1", "lane1", "lane0", "lane1", "lane1", "lane0", "lane0"]
    assert "Merge run scheduled__2026-11-04" in rows[0][1] and "merge" in rows[0][0]
    assert "Mark the table complete" in rows[1][1] and "Clean orders of 2026-11-04" in rows[2][1]
    assert "Airflow: orders / scheduled__2026-11-04T00:00:00+00:00" in rows[1][1]
    first_parents = [c.id for c in shared_lake.log("main", first_parent=True)]
    shas = [a["title"] for a, _ in elements(page.text, "a", class_="sha")]
    assert [s for s in shas if s in first_parents] == first_parents


def test_log_pages_on_without_overlap(shared_gv: Graveler, shared_lake: Repository):
    http = TestClient(create_app(shared_gv, UIOptions(log_page_size=2)))
    seen: list[str] = []
    url: str | None = Links().log("lake", "main")
    while url:
        page = http.get(url, headers={"HX-Request": "true"} if seen else {})
        shas = [a["title"] for a, _ in elements(page.text, "a", class_="sha")]
        seen += shas
        more = [a["href"] for a, text in elements(page.text, "a") if text == "Older commits"]
        url = more[0] if more else None
    assert seen == [*dict.fromkeys(seen)]  # no commit twice
    everything = {c.id for c in shared_lake.log("main")}
    assert set(seen) == everything


def test_commit_page_shows_metadata_links_parents_and_changes(
    http: TestClient, shared_lake: Repository
):
    head = shared_lake.resolve("main").commit
    page = http.get(Links().commit("lake", "main"))
    assert page.status_code == 200 and head.id in page.text
    assert links(page.text)[sample.AIRFLOW_LINK] == sample.AIRFLOW_LINK  # [url:ui] -> a link
    parents = [shared_lake.get_commit(p) for p in head.parents]
    hrefs = set(links(page.text).values())
    assert {Links().commit("lake", p.id) for p in parents} <= hrefs
    changes = [(a["class"], t) for a, t in elements(page.text, "tr", class_="change")]
    assert [(c.split()[1], t.split()[1]) for c, t in changes] == [
        ("added", "2026-11-04.csv"),
        ("changed", "_SUCCESS"),
        ("added", "part-2026-11-04.parquet"),
    ]
    folders = [t for _, t in elements(page.text, "tr", class_="folder")]
    assert folders == ["raw/orders/", "tables/orders/"]
    (totals,) = elements(page.text, "div", class_="totals")
    assert "3 changes" in totals[1] and "+2" in totals[1] and "~1" in totals[1]


def test_compare_any_two_refs(http: TestClient, shared_lake: Repository):
    first = shared_lake.log("main", first_parent=True)
    oldest_merge = list(first)[1].id
    page = http.get(Links().compare("lake", oldest_merge[:10], "main"))
    assert page.status_code == 200
    paths = [t for _, t in elements(page.text, "td", class_="path")]
    assert paths == ["2026-11-04.csv", "_SUCCESS", "part-2026-11-04.parquet"]
    groups = links(page.text)
    assert groups["raw/"] == Links().compare("lake", oldest_merge[:10], "main", "raw/")
    under = http.get(groups["tables/"])
    assert [t for _, t in elements(under.text, "td", class_="path")] == paths[1:]


def _bulk_branch(lake: Repository, n: int) -> None:
    """A branch ``bulk`` whose tree differs from main's by ``n`` added objects in 3 folders
    (entries without bytes: the comparison reads only the trees)."""
    lake.create_branch("bulk", "main")
    when = datetime(2026, 1, 1, tzinfo=UTC)
    entries = [
        ObjectEntry(f"bulk/{d}/part-{i:05d}", f"data/x{i}", i, f"{i:064x}", when)
        for d in ("a", "b", "c")
        for i in range(n // 3)
    ]
    lake.import_entries("bulk", entries, "bulk import")


def test_compare_pages_through_many_changes_and_counts_them(gv: Graveler, lake: Repository):
    _bulk_branch(lake, 900)
    http = TestClient(create_app(gv, UIOptions(page_size=100)))
    url: str | None = Links().compare("lake", "main", "bulk")
    first = http.get(url)
    assert 'hx-trigger="load"' in first.text  # more than a page: counts come separately
    seen: list[str] = []
    while url:
        page = http.get(url, headers={"HX-Request": "true"} if seen else {})
        seen += [
            a["title"]
            for a, _ in elements(page.text, "a")
            if a.get("title", "").startswith("bulk/")
        ]
        more = [a["href"] for a, t in elements(page.text, "a", class_="more")]
        url = more[0] if more else None
    assert seen == [d.path for d in lake.diff("main", "bulk")]
    summary = Links().compare_summary("lake", "main", "bulk")
    for _ in range(20):
        counted = http.get(summary)
        if "counted so far" not in counted.text:
            break
    assert elements(counted.text, "div", class_="totals")[0][1].startswith("900 changes")
    cells = [t for a, t in elements(counted.text, "td", class_="added")]
    assert cells == ["900"]  # grouped by the first path segment below the prefix: bulk/


def test_counting_goes_in_slices_that_resume(gv: Graveler, lake: Repository):
    _bulk_branch(lake, 1500)
    http = TestClient(create_app(gv, UIOptions(count_seconds=0.0)))  # 256 changes a request
    url = Links().compare_summary("lake", "main", "bulk", "bulk/")
    bodies = [http.get(url).text for _ in range(8)]
    totals = [elements(b, "div", class_="totals")[0][1].split()[0] for b in bodies]
    assert totals[:6] == ["256", "512", "768", "1,024", "1,280", "1,500"]
    assert "counted so far" in bodies[0] and "counted so far" not in bodies[5]
    assert 'hx-trigger="load delay' in bodies[0] and "hx-trigger" not in bodies[6]


def test_object_browser_lists_folders_and_pages(shared_gv: Graveler, shared_lake: Repository):
    http = TestClient(create_app(shared_gv, UIOptions(page_size=2)))
    top = http.get(Links().tree("lake", "main"))
    names = [t for _, t in elements(top.text, "td") if t.endswith("/") or "." in t]
    assert sorted(names) == ["README.txt", "config/"]  # the first two keys, folders first
    more = [a["href"] for a, t in elements(top.text, "a", class_="more")]
    rest = http.get(more[0], headers={"HX-Request": "true"})
    assert "<html" not in rest.text and "notes/" in rest.text  # a fragment, the next page
    orders = http.get(Links().tree("lake", "main", "raw/orders/"))
    assert "2026-11-01.csv" in orders.text and "2026-11-03.csv" in orders.text


def test_object_page_and_previews(http: TestClient, shared_lake: Repository):
    page = http.get(Links().object("lake", "main", "raw/orders/2026-11-01.csv"))
    entry = shared_lake.stat("main", "raw/orders/2026-11-01.csv")
    assert entry.checksum in page.text and f"{entry.size:,} bytes" in page.text
    csv = http.get(Links().preview("lake", "main", "raw/orders/2026-11-01.csv"))
    assert [t for _, t in elements(csv.text, "th")] == ["order_id", "customer", "amount"]
    assert "carol" in [t for _, t in elements(csv.text, "td")]
    js = http.get(Links().preview("lake", "main", "config/pipeline.json"))
    assert '"tables": [\n    "orders"\n  ]' in elements(js.text, "pre")[0][1]
    text = http.get(Links().preview("lake", "main", "README.txt"))
    assert "Orders lake" in text.text
    pq = http.get(Links().preview("lake", "main", "tables/orders/part-2026-11-04.parquet"))
    facts = dict(
        zip(
            [t for _, t in elements(pq.text, "th")],
            [t for _, t in elements(pq.text, "td")],
            strict=False,
        )
    )
    assert facts["Rows"] == "41"
    schema = [t for a, t in elements(pq.text, "td", class_="mono")]
    assert schema[:2] == ["order_id", "int64"] and "customer" in schema
    rows = [t for _, t in elements(pq.text, "td")]
    assert "customer-1" in rows
    img = http.get(Links().preview("lake", "main", "images/logo.png"))
    (image,) = elements(img.text, "img")
    raw = http.get(image[0]["src"])
    assert raw.content == sample.PNG and raw.headers["content-type"] == "image/png"


def test_uncommitted_changes_of_a_branch(http: TestClient):
    page = http.get(Links().changes("lake", sample.XSS_BRANCH))
    rows = elements(page.text, "tr", class_="change")
    kinds = [(a["class"].split()[1], t.split()[1]) for a, t in rows]
    assert kinds == [("removed", "README.txt"), ("added", "new.csv"), ("changed", "2026-11-01.csv")]
    assert "3 changes" in elements(page.text, "div", class_="totals")[0][1]


def test_every_link_kind_leads_to_a_page(http: TestClient, shared_lake: Repository):
    head = shared_lake.resolve("main").commit.id
    to = Links()
    for url in [
        to.home(),
        to.branches("lake"),
        to.log("lake", "main"),
        to.commit("lake", head),
        to.compare("lake", "main~1", "main"),
        to.compare_summary("lake", "main~1", "main"),
        to.changes("lake", sample.XSS_BRANCH),
        to.tree("lake", "main", "raw/"),
        to.object("lake", "main", sample.XSS_KEY),
        to.preview("lake", "main", sample.XSS_KEY),
        to.raw("lake", "main", sample.XSS_KEY),
        to.static("graveler.css"),
    ]:
        assert http.get(url).status_code == 200, url
    found = http.get(to.find_run(sample.run_branch("2026-11-05", 2), {}), follow_redirects=False)
    assert found.status_code == 303
    day = "2026-11-04"
    meta = {k: v for k, v in sample.lineage(day).items() if "url" not in k}
    merged = http.get(to.find_run(sample.run_branch(day, 1), meta), follow_redirects=False)
    assert merged.headers["location"] == to.commit("lake", head)


def test_bad_requests_get_error_pages(http: TestClient):
    cases = {
        "/repos/nothere": 404,
        "/repos/lake/commits/no-such-ref": 404,
        "/repos/lake/object?ref=main&path=missing.csv": 404,
        "/repos/lake/object?ref=main": 400,
        "/repos/lake/tree?ref=main&after=%00": 400,
        "/repos/lake/log?ref=no-such-branch": 404,
        "/repos/lake/changes": 400,
        "/nowhere": 404,
    }
    for url, status in cases.items():
        page = http.get(url)
        assert page.status_code == status, url
        assert "<h1>" in page.text and "Traceback" not in page.text
    assert "missing or invalid: path" in http.get("/repos/lake/object?ref=main").text
