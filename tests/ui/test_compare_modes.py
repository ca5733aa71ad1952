"""The compare page shows what a branch changed since it parted from the other ref (the
three-dot diff, from their merge base), says so, and has the direct two-dot diff one click
away; a branch's uncommitted changes are linked, on their own page.

Reproduced before the fix: ``main … etl-1`` diffed the two heads, so a file added on
``main`` after ``etl-1`` was cut showed as removed, and an Iceberg table merged into ``main``
meanwhile showed as a table whose column ``id`` was removed.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.server.ui import create_app
from graveler.server.ui.links import Links
from graveler.tables.iceberg import GravelerCatalog
from tests.iceberg.helpers import SCHEMA, rows
from tests.ui.html import elements, links


@pytest.fixture
def forked(gv: Graveler) -> Repository:
    """``etl-1`` cut from ``main``, then: ``etl-1`` adds ``etl.csv`` (and stages
    ``staged.csv``); ``main`` gains ``only-main.csv`` and an Iceberg table ``db.t``."""
    repo = gv.create_repository("lake")
    repo.put("main", "shared.csv", b"a\n1\n")
    repo.commit("main", "base")
    repo.create_branch("etl-1", "main")
    repo.put("etl-1", "etl.csv", b"e\n1\n")
    repo.commit("etl-1", "etl work")
    repo.put("main", "only-main.csv", b"m\n1\n")
    repo.commit("main", "main moved on")
    repo.create_branch("tables", "main")
    catalog = GravelerCatalog("t", repo)
    catalog.create_namespace(("tables", "db"))
    catalog.create_table("tables.db.t", SCHEMA).append(rows([1, 2], 1))
    repo.merge("tables", "main")
    repo.put("etl-1", "staged.csv", b"s\n")
    return repo


def test_the_default_is_what_the_branch_changed(gv: Graveler, forked: Repository):
    http = TestClient(create_app(gv), raise_server_exceptions=False)
    page = http.get(Links().compare("lake", "main", "etl-1"))
    assert page.status_code == 200
    assert [t for _, t in elements(page.text, "td", class_="path")] == ["etl.csv"]
    assert elements(page.text, "section", class_="tables") == []  # main's table is not etl-1's
    ((mode, said),) = elements(page.text, "p", class_="diff-mode")
    assert mode["data-diff"] == "three-dot" and "since it and main parted" in said
    base = forked.resolve("etl-1~1").commit.id
    assert Links().commit("lake", base) in page.text
    totals = elements(page.text, "div", class_="totals")[0][1]
    assert totals.startswith("1 change")
    switch = links(page.text)["Compare the two heads directly (two-dot)"]
    assert switch == Links().compare("lake", "main", "etl-1", diff="two-dot")
    uncommitted = elements(page.text, "a", class_="uncommitted")[0][0]["href"]
    assert uncommitted == Links().changes("lake", "etl-1")
    staged = http.get(uncommitted)
    assert [t for _, t in elements(staged.text, "td", class_="path")] == ["staged.csv"]


def test_the_two_dot_diff_is_one_click_away(gv: Graveler, forked: Repository):
    http = TestClient(create_app(gv), raise_server_exceptions=False)
    page = http.get(Links().compare("lake", "main", "etl-1", diff="two-dot"))
    assert page.status_code == 200
    ((mode, said),) = elements(page.text, "p", class_="diff-mode")
    assert mode["data-diff"] == "two-dot" and "shows as removed" in said
    listed = [t for _, t in elements(page.text, "td", class_="path")]
    assert "etl.csv" in listed and "only-main.csv" in listed
    (section,) = elements(page.text, "section", class_="tables")
    assert "db/t/" in section[1] and "removed" in section[1]
    back = links(page.text)["Show only what etl-1 changed (three-dot)"]
    assert back == Links().compare("lake", "main", "etl-1")
    summary = http.get(Links().compare_summary("lake", "main", "etl-1", diff="two-dot"))
    assert "change" in elements(summary.text, "div", class_="totals")[0][1]


def test_a_diff_it_does_not_know_is_a_bad_request(gv: Graveler, forked: Repository):
    http = TestClient(create_app(gv), raise_server_exceptions=False)
    page = http.get(Links().compare("lake", "main", "etl-1", diff="four-dot"))
    assert page.status_code == 400 and "three-dot or two-dot" in page.text
