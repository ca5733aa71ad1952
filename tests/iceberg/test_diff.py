"""Table diffs of Iceberg tables: the Python call, ``graveler diff`` and the web UI's compare
page show a table as the snapshots of its main branch that one side has and the other lacks,
described from their summaries, with the columns its schema changed (by field ID)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyiceberg.types import DoubleType, LongType

from graveler.cli import main
from graveler.client import Graveler
from graveler.core.errors import CorruptFile
from graveler.repository import Repository
from graveler.tables.iceberg import GravelerCatalog
from graveler.tables.iceberg.names import POINTER
from graveler.tables.port import TableDiff
from tests.iceberg.helpers import SCHEMA, forked_catalog, rows

T = "db/t/"


@pytest.fixture
def catalog(repo: Repository) -> GravelerCatalog:
    """main: table db.t with one append; run: two more appends, a new column, a file."""
    cat = forked_catalog(repo)
    cat.load_table("run.db.t").append(rows([10, 11, 12], 2))
    cat.load_table("run.db.t").append(rows([13], 1))
    with cat.load_table("run.db.t").update_schema() as update:
        update.add_column("x", DoubleType())
    repo.put("run", "notes/readme.txt", b"hello")
    repo.commit("run", "a plain file")
    return cat


def _run_snapshots(catalog: GravelerCatalog, ref: str = "run") -> list[int]:
    """The snapshot IDs of the table's main branch at ``ref``, oldest first."""
    table = catalog.load_table(f"{ref}.db.t")
    ids, sid = [], table.metadata.current_snapshot_id
    while sid is not None:
        ids.append(sid)
        sid = table.snapshot_by_id(sid).parent_snapshot_id  # type: ignore[union-attr]
    return ids[::-1]


def test_diff_tables_shows_the_new_snapshots(catalog: GravelerCatalog, repo: Repository):
    (table,) = repo.diff_tables("main", "run")
    assert (table.root, table.format) == (T, "iceberg")
    assert [(v.version, v.operation) for v in table.added] == [
        (sid, "append") for sid in _run_snapshots(catalog)[1:]
    ]
    first, second = table.added
    assert (first.files_added, first.files_removed, first.rows_added, first.rows_removed) == (
        1,
        0,
        3,
        0,
    )
    assert (second.rows_added, second.rows_removed) == (1, 0)
    assert first.parameters["sequence-number"] == "2" and second.parameters["schema-id"] == "0"
    assert not any(k.startswith("total-") for k in first.parameters)
    assert first.timestamp is not None and first.timestamp <= second.timestamp  # type: ignore[operator]
    assert [(c.column, c.change, c.before, c.after) for c in table.columns] == [
        ("x", "added", None, "double")
    ]
    assert table.removed == ()
    assert (table.total("rows_added"), table.total("files_added")) == (4, 2)


def test_the_other_way_the_snapshots_are_removed(catalog: GravelerCatalog, repo: Repository):
    (table,) = repo.diff_tables("run", "main")
    assert table.added == ()
    assert [(v.version, v.operation, v.rows_added) for v in table.removed] == [
        (sid, "append", n) for sid, n in zip(_run_snapshots(catalog)[1:], (3, 1), strict=True)
    ]
    assert [(c.column, c.change, c.before, c.after) for c in table.columns] == [
        ("x", "removed", "double", None)
    ]


def test_a_table_created_on_the_branch_is_all_added(catalog: GravelerCatalog, repo: Repository):
    catalog.create_table("run.db.u", SCHEMA).append(rows([5, 6], 1))
    created = _table(repo.diff_tables("main", "run"), "db/u/")
    (snapshot,) = created.added
    assert (snapshot.operation, snapshot.rows_added, snapshot.parameters["sequence-number"]) == (
        "append",
        2,
        "1",
    )
    assert [(c.column, c.change, c.after) for c in created.columns] == [
        ("id", "added", "long"),
        ("p", "added", "int"),
        ("v", "added", "string"),
    ]
    dropped = _table(repo.diff_tables("run", "main"), "db/u/")
    assert dropped.added == () and [v.version for v in dropped.removed] == [snapshot.version]
    assert {c.change for c in dropped.columns} == {"removed"}


def _table(tables: list[TableDiff], root: str) -> TableDiff:
    (found,) = [t for t in tables if t.root == root]
    return found


def test_deletes_renames_and_type_changes(catalog: GravelerCatalog, repo: Repository):
    repo.create_branch("edit", "main")
    catalog.load_table("edit.db.t").delete("id = 1")
    with catalog.load_table("edit.db.t").update_schema() as update:
        update.rename_column("v", "value")
        update.update_column("p", LongType())
    (table,) = repo.diff_tables("main", "edit")
    (delete,) = table.added
    assert delete.operation == "overwrite"  # pyiceberg rewrites the file (copy-on-write)
    assert (delete.files_removed, delete.rows_removed) == (1, 2)
    assert (delete.files_added, delete.rows_added) == (1, 1)  # the rewrite keeps id 2
    assert [(c.column, c.change, c.before, c.after) for c in table.columns] == [
        ("p", "changed", "int", "long"),
        ("value", "renamed", "v", "value"),
    ]


def test_a_merged_snapshot_is_the_same_version_on_both_sides(
    catalog: GravelerCatalog, repo: Repository
):
    catalog.load_table("main.db.t").append(rows([20], 3))
    own = catalog.load_table("main.db.t").metadata.current_snapshot_id
    repo.merge("run", "main")
    (table,) = repo.diff_tables("run", "main")
    assert [v.version for v in table.added] == [own], "the replayed snapshots keep their IDs"
    assert table.removed == () and table.columns == ()


def test_the_diff_reads_metadata_not_manifests(catalog: GravelerCatalog, repo: Repository):
    """Deleting every manifest and data file of the run leaves the diff unchanged: it reads
    the two metadata files (the pointer's) only."""
    before = repo.diff_tables("main", "run")
    storage = Path(repo.info.storage_namespace.removeprefix("file://"))
    hidden = [p for p in storage.rglob("*") if p.suffix in (".avro", ".parquet")]
    assert len(hidden) >= 6
    for path in hidden:
        path.rename(path.with_name(path.name + ".gone"))
    assert repo.diff_tables("main", "run") == before


def _cli(home: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["--home", str(home), *args]) == 0
    return capsys.readouterr().out


def test_graveler_diff_names_the_table_and_its_snapshots(
    catalog: GravelerCatalog,
    tmp_path: Path,
    database_url: str,
    capsys: pytest.CaptureFixture[str],
):
    first, second = _run_snapshots(catalog)[1:]
    home = [str(tmp_path / "home"), "--database-url", database_url]
    both = ["graveler://lake/main", "graveler://lake/run"]
    docs = json.loads(_cli(Path(home[0]), *home[1:], "--json", "diff", *both, capsys=capsys))
    assert [(d["type"], d["path"]) for d in docs] == [
        ("table", T),
        ("added", "notes/readme.txt"),
    ]
    table = docs[0]
    assert table["format"] == "iceberg"
    assert [(v["version"], v["operation"]) for v in table["added"]] == [
        (first, "append"),
        (second, "append"),
    ]
    assert (table["rows_added"], table["rows_removed"], table["files_added"]) == (4, 0, 2)
    assert table["columns"] == [
        {"column": "x", "change": "added", "before": None, "after": "double"}
    ]
    text = _cli(Path(home[0]), *home[1:], "diff", *both, capsys=capsys)
    assert f"{T} (iceberg): 2 version(s) added" in text
    assert f"v{first} append" in text and f"v{second} append" in text
    assert "column x added" in text and ".avro" not in text and ".parquet" not in text
    files = json.loads(
        _cli(Path(home[0]), *home[1:], "--json", "diff", *both, "--files", capsys=capsys)
    )
    assert {d["type"] for d in files} <= {"added", "changed", "removed"}
    assert T + POINTER in {d["path"] for d in files}


def test_the_compare_page_lists_the_table(catalog: GravelerCatalog, gv: Graveler):
    from fastapi.testclient import TestClient

    from graveler.server.ui import create_app
    from graveler.server.ui.links import Links
    from tests.ui.html import elements

    first = _run_snapshots(catalog)[1]
    http = TestClient(create_app(gv), raise_server_exceptions=False)
    page = http.get(Links().compare("lake", "main", "run"))
    assert page.status_code == 200
    (section,) = elements(page.text, "section", class_="tables")
    assert T in section[1] and "iceberg table" in section[1]
    assert str(first) in section[1] and "append" in section[1]
    assert "sequence-number=2" in section[1]
    assert "column" in section[1] and "double" in section[1]
    paths = [t for _, t in elements(page.text, "td", class_="path")]
    assert paths == ["readme.txt"], "the table's metadata and data files are not listed"
    files = http.get(Links().compare("lake", "main", "run", view="files"))
    listed = [t for _, t in elements(files.text, "td", class_="path")]
    assert "current.metadata.json" in listed


def test_metadata_that_is_not_iceberg_is_a_corrupt_file(catalog: GravelerCatalog, repo: Repository):
    repo.create_branch("broken", "main")
    repo.put("broken", T + POINTER, b'{"snapshots": [{"summary": {}}]}')
    repo.commit("broken", "a pointer that names no snapshot ID")
    with pytest.raises(CorruptFile, match="not table metadata"):
        repo.diff_tables("main", "broken")
