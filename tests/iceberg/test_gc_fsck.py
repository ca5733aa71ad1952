"""Garbage collection and fsck with Iceberg tables: what a retained commit's table needs is
kept, what nothing retained references goes, and fsck checks every file a table needs."""

from __future__ import annotations

from datetime import timedelta

import pytest

from graveler.maintenance.fsck import ProblemKind, fsck
from graveler.maintenance.gc import RetentionRules, collect_garbage
from graveler.repository import Repository
from graveler.tables.iceberg import GravelerCatalog
from tests.iceberg.helpers import SCHEMA, SPEC, content, rows

NO_RETENTION = RetentionRules(default_days=0, branch_days={"main": 0})


@pytest.fixture
def catalog(repo: Repository) -> GravelerCatalog:
    cat = GravelerCatalog("test", repo)
    cat.create_namespace(("main", "db"))
    cat.create_table("main.db.t", SCHEMA, partition_spec=SPEC).append(rows([1, 2], 1))
    return cat


def _collect(repo: Repository) -> set[str]:
    report = collect_garbage(repo, NO_RETENTION, grace=timedelta(0))
    return {o.key for o in report.selected}


def test_a_run_table_merged_survives_its_branch_and_gc(catalog: GravelerCatalog, repo: Repository):
    repo.create_branch("run", "main")
    catalog.load_table("run.db.t").append(rows([10], 2))
    catalog.load_table("main.db.t").append(rows([20], 1))
    run_lists = {s.manifest_list for s in catalog.load_table("run.db.t").snapshots()}
    repo.merge("run", "main")  # replayed: main has new manifest lists for run's snapshot
    repo.delete_branch("run")
    merged = catalog.load_table("main.db.t")
    needed = {s.manifest_list for s in merged.snapshots()}
    deleted = _collect(repo)
    assert deleted, "the run's own manifest lists and old metadata files are garbage"
    assert not any(uri.endswith(key) for uri in needed for key in deleted)
    assert any(uri.endswith(key) for uri in run_lists - needed for key in deleted)
    after = catalog.load_table("main.db.t")
    assert content(after) == [(1, 1, "x"), (2, 1, "x"), (10, 2, "x"), (20, 1, "x")]
    for snapshot in after.snapshots():  # time travel over the whole history still works
        after.scan(snapshot_id=snapshot.snapshot_id).to_arrow()
    assert fsck(repo).clean


def test_gc_keeps_what_a_tag_needs_and_drops_a_dropped_table(
    catalog: GravelerCatalog, repo: Repository
):
    table = catalog.load_table("main.db.t")
    table.delete("id = 1")
    repo.create_tag("before-drop", "main")
    catalog.create_table("main.db.gone", SCHEMA).append(rows([5], 1))
    gone_files = {e.physical_address for e in repo.iter_objects("main", prefix="db/gone/")}
    catalog.drop_table("main.db.gone")
    catalog.load_table("main.db.t").append(rows([3], 1))
    deleted = _collect(repo)
    assert gone_files <= deleted
    assert content(catalog.load_table("before-drop.db.t")) == [(2, 1, "x")]
    assert content(catalog.load_table("main.db.t")) == [(2, 1, "x"), (3, 1, "x")]
    assert fsck(repo).clean


def test_fsck_reports_missing_table_files(catalog: GravelerCatalog, repo: Repository):
    assert fsck(repo).clean
    data = next(e for e in repo.iter_objects("main", prefix="db/t/data/"))
    repo.store.delete(data.physical_address)
    report = fsck(repo)
    assert [(p.kind, p.subject) for p in report.problems] == [
        (ProblemKind.MISSING_OBJECT, data.physical_address)
    ]


def test_fsck_reports_a_table_file_missing_from_the_tree(
    catalog: GravelerCatalog, repo: Repository
):
    data = next(e for e in repo.iter_objects("main", prefix="db/t/data/"))
    repo.delete("main", data.path)
    repo.commit("main", "lose a table file from the tree")
    report = fsck(repo)
    kinds = {(p.kind, p.subject) for p in report.problems}
    assert (ProblemKind.TABLE_FILE, data.physical_address) in kinds
