"""Table diffs (issue 27, point 6): the Python call and ``graveler diff`` show a Delta table
as its versions, operations, files, rows and column changes; ``--files`` shows files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graveler.cli import main
from graveler.client import Graveler
from graveler.repository import Repository
from tests.tables.delta import ops
from tests.tables.delta.workdir import checkout, publish

ROOT = "t/"


@pytest.fixture
def changed(tmp_path: Path) -> tuple[Graveler, Repository]:
    """main: the base table and a plain file; run: three more versions and another file."""
    gv = Graveler(home=tmp_path / "home", database_url=f"sqlite:///{tmp_path / 'refs.db'}")
    repo = gv.create_repository("lake", (tmp_path / "ns").as_uri())
    table = tmp_path / "base"
    for step in ops.BASE:
        ops.run(table, step)
    publish(repo, "main", ROOT, table, "base")
    repo.create_branch("run", "main")
    work = checkout(repo, "run", ROOT, tmp_path / "run")
    ops.run(work, ops.append((10, "a"), (11, "a")))
    ops.run(work, ops.delete("part = 'b'"))
    ops.run(work, ops.evolve((12, "a", 0.5)))
    publish(repo, "run", ROOT, work, "three versions")
    repo.put("run", "notes/readme.txt", b"hello")
    repo.commit("run", "a plain file")
    yield gv, repo
    gv.close()


def test_diff_tables_describes_the_versions(changed: tuple[Graveler, Repository]):
    _, repo = changed
    (table,) = repo.diff_tables("main", "run")
    assert (table.root, table.format) == (ROOT, "delta")
    assert [(v.version, v.operation) for v in table.added] == [
        (2, "WRITE"),
        (3, "DELETE"),
        (4, "WRITE"),
    ]
    append, delete, evolve = table.added
    assert (append.files_added, append.rows_added, append.rows_removed) == (1, 2, 0)
    # delta-rs's remove carries no stats: the rows come from the file's add on main
    assert (delete.files_removed, delete.rows_removed) == (1, 1)
    assert delete.parameters["predicate"] == "part = 'b'"
    assert evolve.rows_added == 1 and evolve.timestamp is not None
    assert [(c.column, c.change, c.before, c.after) for c in table.columns] == [
        ("x", "added", None, "double")
    ]
    assert table.total("rows_added") == 3 and table.total("rows_removed") == 1
    assert table.removed == ()


def test_the_other_way_the_versions_are_only_on_the_left(changed: tuple[Graveler, Repository]):
    _, repo = changed
    (table,) = repo.diff_tables("run", "main")
    assert table.added == () and [v.version for v in table.removed] == [2, 3, 4]
    assert [(c.column, c.change) for c in table.columns] == [("x", "removed")]


def _cli(home: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["--home", str(home), *args]) == 0
    return capsys.readouterr().out


def test_graveler_diff_shows_the_table_and_files_on_request(
    changed: tuple[Graveler, Repository], tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    home = ["--database-url", f"sqlite:///{tmp_path / 'refs.db'}"]
    both = ["graveler://lake/main", "graveler://lake/run"]
    docs = json.loads(_cli(tmp_path / "home", *home, "--json", "diff", *both, capsys=capsys))
    assert [(d["type"], d["path"]) for d in docs] == [
        ("added", "notes/readme.txt"),
        ("table", ROOT),
    ]
    table = docs[1]
    assert [v["operation"] for v in table["added"]] == ["WRITE", "DELETE", "WRITE"]
    assert (table["rows_added"], table["rows_removed"], table["files_added"]) == (3, 1, 2)
    assert table["columns"] == [
        {"column": "x", "change": "added", "before": None, "after": "double"}
    ]
    text = _cli(tmp_path / "home", *home, "diff", *both, capsys=capsys)
    assert "t/ (delta): 3 version(s) added" in text and "v3 DELETE" in text
    assert "_delta_log" not in text
    files = json.loads(
        _cli(tmp_path / "home", *home, "--json", "diff", *both, "--files", capsys=capsys)
    )
    assert {d["type"] for d in files} == {"added"}
    assert f"{ROOT}_delta_log/{4:020d}.json" in {d["path"] for d in files}


def test_the_compare_page_shows_the_table_with_its_files_one_click_away(
    changed: tuple[Graveler, Repository],
):
    from fastapi.testclient import TestClient

    from graveler.server.ui import create_app
    from graveler.server.ui.links import Links
    from tests.ui.html import elements

    gv, _ = changed
    http = TestClient(create_app(gv), raise_server_exceptions=False)
    page = http.get(Links().compare("lake", "main", "run"))
    assert page.status_code == 200
    (section,) = elements(page.text, "section", class_="tables")
    assert "t/" in section[1] and "delta table" in section[1]
    assert "DELETE" in section[1] and "predicate=part = 'b'" in section[1]
    assert "column" in section[1] and "double" in section[1]
    paths = [t for _, t in elements(page.text, "td", class_="path")]
    assert paths == ["readme.txt"], "the table's log and data files are not listed"
    files_url = Links().compare("lake", "main", "run", view="files")
    assert files_url.replace("&", "&amp;") in page.text
    files = http.get(files_url)
    listed = [t for _, t in elements(files.text, "td", class_="path")]
    assert f"{4:020d}.json" in listed and not elements(files.text, "section", class_="tables")
