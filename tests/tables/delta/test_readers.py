"""Readers of a merged Delta table (issue 27, point 5): delta-rs, DuckDB (``delta_scan``, the
extension from its PyPI package), polars and delta-spark (the oracle's process) read it at a
branch, a tag and a commit ID through ``graveler_spark.native.local_view``, and with Delta's
own time travel (``versionAsOf``); the table stays readable on main after the run branch
that wrote part of it is deleted and garbage collected."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb
import duckdb_extension_delta
import polars as pl
import pytest
from deltalake import DeltaTable
from graveler_spark.native import local_view

from graveler.client import Graveler
from graveler.maintenance.gc import RetentionRules, collect_garbage
from graveler.repository import Repository
from tests.tables.delta import ops
from tests.tables.delta.conftest import SparkOracle
from tests.tables.delta.workdir import checkout, publish

ROOT = "t/"
AT_COMMIT = [[1, "a"], [10, "a"], [2, "b"], [3, "a"]]  # main before the merge: version 2
AT_TAG = sorted([*AT_COMMIT, [20, "b"]], key=repr)  # the merge: version 3
AT_BRANCH = sorted([*AT_TAG, [30, "a"]], key=repr)  # one more append: version 4


@dataclass
class Lake:
    gv: Graveler
    repo: Repository
    commit: str  # main before the merge
    source_log: str  # the run branch's own commit file, which main does not keep


@pytest.fixture
def lake(tmp_path: Path) -> Iterator[Lake]:
    gv = Graveler(home=tmp_path / "home", database_url=f"sqlite:///{tmp_path / 'refs.db'}")
    repo = gv.create_repository("lake", (tmp_path / "ns").as_uri())
    base = tmp_path / "base"
    for step in ops.BASE:
        ops.run(base, step)
    publish(repo, "main", ROOT, base, "base")
    repo.create_branch("run", "main")
    for branch, spec in (("run", ops.append((20, "b"))), ("main", ops.append((10, "a")))):
        work = checkout(repo, branch, ROOT, tmp_path / branch)
        ops.run(work, spec)
        publish(repo, branch, ROOT, work, "append")
    before = repo.branch("main").commit_id
    source_log = repo.stat("run", f"{ROOT}_delta_log/{2:020d}.json").physical_address
    repo.merge("run", "main")  # both appended: merged as a table
    repo.create_tag("v1", "main")
    work = checkout(repo, "main", ROOT, tmp_path / "later")
    ops.run(work, ops.append((30, "a")))
    publish(repo, "main", ROOT, work, "one more append")
    try:
        yield Lake(gv, repo, before, source_log)
    finally:
        gv.close()


def _view(lake: Lake, ref: str, tmp_path: Path) -> Path:
    where = tmp_path / f"view-{len(list(tmp_path.glob('view-*')))}"
    where.mkdir()
    assert local_view(lake.repo, ref, ROOT, str(where)) > 0
    return where


def by_delta_rs(path: Path, version: int | None) -> list[list[Any]]:
    table = DeltaTable(str(path), version=version).to_pyarrow_table()
    return sorted(([r["id"], r["part"]] for r in table.to_pylist()), key=repr)


def by_duckdb(path: Path, version: int | None) -> list[list[Any]]:
    extension = next(Path(duckdb_extension_delta.__file__).parent.rglob("delta.duckdb_extension"))
    con = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    )
    con.execute(f"LOAD '{extension}'")
    at = "" if version is None else f", version := {version}"
    found = con.execute(f"SELECT id, part FROM delta_scan('{path}'{at})").fetchall()
    return sorted((list(r) for r in found), key=repr)


def by_polars(path: Path, version: int | None) -> list[list[Any]]:
    frame = pl.read_delta(str(path), version=version)
    return sorted(([r["id"], r["part"]] for r in frame.to_dicts()), key=repr)


READERS: dict[str, Callable[[Path, int | None], list[list[Any]]]] = {
    "delta-rs": by_delta_rs,
    "duckdb": by_duckdb,
    "polars": by_polars,
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_reader_at_a_branch_a_tag_a_commit_and_a_version(
    lake: Lake, tmp_path: Path, reader: str
):
    read = READERS[reader]
    for ref, expected in (("main", AT_BRANCH), ("v1", AT_TAG), (lake.commit, AT_COMMIT)):
        assert read(_view(lake, ref, tmp_path), None) == expected, ref
    latest = _view(lake, "main", tmp_path)
    assert read(latest, 3) == AT_TAG and read(latest, 2) == AT_COMMIT


def test_delta_spark_at_a_branch_a_tag_a_commit_and_versionAsOf(
    lake: Lake, tmp_path: Path, spark_oracle: SparkOracle
):
    def read(ref: str, version: int | None = None) -> list[Any]:
        path = str(_view(lake, ref, tmp_path))
        cols = ["id", "part"]
        return spark_oracle.ask(cmd="read", path=path, version=version, columns=cols)["rows"]

    assert read("main") == AT_BRANCH
    assert read("v1") == AT_TAG
    assert read(lake.commit) == AT_COMMIT
    assert read("main", 3) == AT_TAG and read("main", 2) == AT_COMMIT


def test_the_table_outlives_its_run_branch_and_garbage_collection(lake: Lake, tmp_path: Path):
    repo = lake.repo
    repo.delete_branch("run")
    now = repo.branch("main").commit_id
    when = repo.get_commit(now).creation_date + timedelta(days=30)
    report = collect_garbage(repo, RetentionRules(default_days=7), now=when)
    assert lake.source_log in {o.key for o in report.selected}, "the run's own log went"
    assert not repo.store.exists(lake.source_log)
    view = _view(lake, "main", tmp_path)
    assert by_delta_rs(view, None) == AT_BRANCH
    for version in range(5):  # every version's files are still there
        by_delta_rs(view, version)
