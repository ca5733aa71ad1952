"""The logical merge of Iceberg tables, driven by pyiceberg on two branches: what combines,
what conflicts (TableConflict naming the table, the snapshots and the reason, the
destination unchanged), and the shape of the merged table (unique snapshot IDs, sequence
numbers reassigned, refs carried)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyiceberg.types import LongType, StringType

from graveler.core.errors import CorruptFile, MergeConflict, TableConflict
from graveler.repository import Repository
from graveler.tables.iceberg import GravelerCatalog
from graveler.tables.iceberg.names import POINTER
from graveler.versioning import merge as merges
from tests.iceberg.helpers import content, forked_catalog, rows

T = "db/t/"


@pytest.fixture
def catalog(repo: Repository) -> GravelerCatalog:
    return forked_catalog(repo)


def table(catalog: GravelerCatalog, ref: str = "main"):
    return catalog.load_table(f"{ref}.db.t")


def test_appends_on_both_sides_combine(catalog: GravelerCatalog, repo: Repository):
    table(catalog, "run").append(rows([10], 2))
    table(catalog, "run").append(rows([11], 1))
    table(catalog, "main").append(rows([20], 1))
    repo.merge("run", "main")
    merged = table(catalog)
    assert content(merged) == [(1, 1, "x"), (2, 1, "x"), (10, 2, "x"), (11, 1, "x"), (20, 1, "x")]
    snapshots = merged.metadata.snapshots
    assert len({s.snapshot_id for s in snapshots}) == len(snapshots) == 4
    chain, sid = [], merged.metadata.current_snapshot_id
    while sid is not None:
        snap = merged.snapshot_by_id(sid)
        chain.append(snap)
        sid = snap.parent_snapshot_id
    assert [s.sequence_number for s in reversed(chain)] == [1, 2, 3, 4]
    assert merged.metadata.last_sequence_number == 4
    assert [s.summary.operation.value for s in reversed(chain)] == ["append"] * 4
    assert chain[0].summary["total-records"] == "5"
    main_before = json.loads(repo.get("main~1", T + POINTER))
    assert merged.metadata.metadata_log[-1].metadata_file.endswith(
        repo.stat("main~1", T + POINTER).physical_address
    )
    assert main_before["current-snapshot-id"] == chain[2].snapshot_id
    for snap in chain:  # every file the merged table needs is in main's tree
        relative = snap.manifest_list.split("/data/iceberg/")[1].split("/", 1)[1]
        assert repo.exists("main", T + relative)


def test_only_one_side_changed_takes_its_pointer(catalog: GravelerCatalog, repo: Repository):
    table(catalog, "run").append(rows([3], 1))
    repo.put("main", "elsewhere.txt", b"x")
    repo.commit("main", "other work")
    repo.merge("run", "main")
    assert (
        repo.stat("main", T + POINTER).physical_address
        == repo.stat("run", T + POINTER).physical_address
    )


@pytest.mark.parametrize(
    ("source_op", "dest_op", "kind"),
    [
        ("delete_same", "append_same", "ConflictingDataFiles"),
        ("overwrite_same", "append_same", "ConflictingDataFiles"),
        ("delete_same", "delete_other_row_same", "MissingRequiredFiles"),
    ],
)
def test_conflicts_name_table_snapshots_and_reason(
    catalog: GravelerCatalog, repo: Repository, source_op: str, dest_op: str, kind: str
):
    OPS[source_op](table(catalog, "run"))
    OPS[dest_op](table(catalog, "main"))
    head = repo.branch("main").commit_id
    with pytest.raises(TableConflict) as caught:
        repo.merge("run", "main")
    err = caught.value
    assert isinstance(err, MergeConflict)
    assert err.table == T and err.format == "iceberg" and err.kind == kind
    assert err.source_version in {s.snapshot_id for s in table(catalog, "run").snapshots()}
    assert str(err.source_version) in str(err) and str(err.dest_version) in str(err)
    assert err.dest_version == table(catalog, "main").metadata.current_snapshot_id
    assert repo.branch("main").commit_id == head


OPS = {
    "append_same": lambda t: t.append(rows([30], 1)),
    "append_other": lambda t: t.append(rows([31], 2)),
    "delete_same": lambda t: t.delete("id = 1"),
    "delete_other_row_same": lambda t: t.delete("id = 2"),
    "overwrite_same": lambda t: t.overwrite(rows([40], 1), overwrite_filter="p = 1"),
}


def test_changes_in_other_partitions_combine(catalog: GravelerCatalog, repo: Repository):
    table(catalog, "main").append(rows([5], 2))
    repo.create_branch("run2", "main")
    table(catalog, "run2").delete("id = 1")
    table(catalog, "run2").overwrite(rows([50], 3), overwrite_filter="p = 3")
    table(catalog, "main").append(rows([6], 2))
    repo.merge("run2", "main")
    assert content(table(catalog)) == [(2, 1, "x"), (5, 2, "x"), (6, 2, "x"), (50, 3, "x")]


def test_both_sides_removing_the_same_rows_is_no_conflict(
    catalog: GravelerCatalog, repo: Repository
):
    table(catalog, "run").delete("p = 1")
    table(catalog, "main").delete("p = 1")
    repo.merge("run", "main")
    assert content(table(catalog)) == []


def test_schema_evolution_beside_an_append(catalog: GravelerCatalog, repo: Repository):
    with table(catalog, "run").update_schema() as update:
        update.add_column("note", StringType())
    table(catalog, "main").append(rows([7], 1))
    repo.merge("run", "main")
    merged = table(catalog)
    assert [f.name for f in merged.schema().fields] == ["id", "p", "v", "note"]
    assert content(merged) == [(1, 1, "x", None), (2, 1, "x", None), (7, 1, "x", None)]


def test_schema_changes_on_both_sides_conflict_unless_identical(
    catalog: GravelerCatalog, repo: Repository
):
    for ref in ("run", "main"):
        with table(catalog, ref).update_schema() as update:
            update.add_column("same", LongType())
    table(catalog, "run").append(rows([8], 2))
    repo.merge("run", "main")  # identical: no conflict
    repo.create_branch("run2", "main")
    with table(catalog, "run2").update_schema() as update:
        update.add_column("left", StringType())
    with table(catalog, "main").update_schema() as update:
        update.add_column("right", StringType())
    with pytest.raises(TableConflict) as caught:
        repo.merge("run2", "main")
    assert caught.value.kind == "SchemaChanged"


def test_properties_and_table_refs_are_carried(catalog: GravelerCatalog, repo: Repository):
    run = table(catalog, "run")
    run.append(rows([9], 2))
    run = table(catalog, "run")
    with run.transaction() as tx:
        tx.set_properties({"owner": "run"})
    run = table(catalog, "run")
    run.manage_snapshots().create_tag(run.metadata.current_snapshot_id, "audited").commit()
    first = run.metadata.snapshots[0].snapshot_id
    run.manage_snapshots().create_branch(first, "side").commit()
    table(catalog, "main").append(rows([21], 1))
    repo.merge("run", "main")
    merged = table(catalog)
    assert merged.metadata.properties["owner"] == "run"
    assert set(merged.metadata.refs) == {"main", "audited", "side"}
    assert merged.metadata.refs["side"].snapshot_id == first
    tagged = merged.metadata.refs["audited"].snapshot_id
    assert merged.snapshot_by_id(tagged) is not None


@pytest.mark.parametrize(("strategy", "winner"), [("source-wins", "run"), ("dest-wins", "main")])
def test_strategies_take_the_whole_table(
    catalog: GravelerCatalog, repo: Repository, strategy: str, winner: str
):
    table(catalog, "run").delete("id = 1")
    table(catalog, "main").append(rows([30], 1))
    expected = content(table(catalog, winner))
    repo.merge("run", "main", strategy=strategy)
    assert content(table(catalog)) == expected


def test_dropped_on_one_side_changed_on_the_other_conflicts(
    catalog: GravelerCatalog, repo: Repository
):
    catalog.drop_table("run.db.t")
    table(catalog, "main").append(rows([3], 1))
    with pytest.raises(TableConflict) as caught:
        repo.merge("run", "main")
    assert caught.value.kind == "TableDropped"


def test_a_run_branch_merged_twice(catalog: GravelerCatalog, repo: Repository):
    """A branch merged, then written again and merged again: only the new snapshot is
    replayed the second time."""
    table(catalog, "run").append(rows([10], 2))
    table(catalog, "main").append(rows([20], 1))
    repo.merge("run", "main")
    table(catalog, "run").append(rows([11], 2))
    table(catalog, "main").append(rows([21], 3))
    repo.merge("run", "main")
    assert content(table(catalog)) == [
        (1, 1, "x"),
        (2, 1, "x"),
        (10, 2, "x"),
        (11, 2, "x"),
        (20, 1, "x"),
        (21, 3, "x"),
    ]


@pytest.mark.parametrize("strategy", ["source-wins", "dest-wins"])
def test_strategies_merge_by_iceberg_rules_first(
    catalog: GravelerCatalog, repo: Repository, strategy: str
):
    """A strategy decides a table only when Iceberg's rules refuse the merge: appends on
    both sides still both land (as a file-level strategy decides conflicting keys only)."""
    table(catalog, "run").append(rows([10], 2))
    table(catalog, "main").append(rows([20], 1))
    repo.merge("run", "main", strategy=strategy)
    assert content(table(catalog)) == [(1, 1, "x"), (2, 1, "x"), (10, 2, "x"), (20, 1, "x")]


@pytest.mark.parametrize("at", ["middle", "start"])
@pytest.mark.parametrize("side", ["base", "source", "dest"])
def test_a_damaged_metadata_file_fails_the_merge_and_changes_nothing(
    catalog: GravelerCatalog, repo: Repository, tmp_path, side: str, at: str
):
    """The three metadata files a merge reads (in the background, at once, parsed while
    their SHA-256 is computed) are each checked before anything is decided: one damaged on
    disk fails the merge with CorruptFile, whichever side it is, even when the damage makes
    it unreadable JSON (``start``), and ``main`` stays where it was."""
    base = repo.stat("main", T + POINTER)
    table(catalog, "run").append(rows([10], 2))
    table(catalog, "main").append(rows([20], 1))
    entry = {"base": base, "source": repo.stat("run", T + POINTER)}.get(side) or repo.stat(
        "main", T + POINTER
    )
    path = tmp_path / "lake-ns" / entry.physical_address
    damaged = bytearray(path.read_bytes())
    damaged[len(damaged) // 2 if at == "middle" else 0] ^= 0x20
    path.write_bytes(bytes(damaged))
    head = repo.resolve("main").commit.id
    with pytest.raises(CorruptFile, match="SHA-256"):
        repo.merge("run", "main")
    assert repo.resolve("main").commit.id == head


def test_what_the_merge_writes_is_made_durable_before_main_moves(
    catalog: GravelerCatalog, repo: Repository, monkeypatch: pytest.MonkeyPatch
):
    """The replayed manifest lists and the merged metadata file are written without waiting
    for the disk and flushed in the background; the merged tree's final ``sync`` waits for
    them, and the branch moves only after it."""
    table(catalog, "run").append(rows([10], 2))
    table(catalog, "main").append(rows([20], 1))
    events: list[tuple[str, Any]] = []
    opened: list[tuple[str, bool]] = []
    store = repo.store
    assert repo.committed.files.store is store
    real_sync, real_open = store.sync, store.open_writer
    real_advance = merges.advance_branch

    def sync(keys: Any) -> None:
        keys = list(keys)
        events.append(("sync", keys))
        real_sync(keys)

    def open_writer(key: str, **kwargs: Any) -> Any:
        opened.append((key, kwargs.get("durable", True)))
        return real_open(key, **kwargs)

    def advance(*args: Any, **kwargs: Any) -> Any:
        events.append(("advance", None))
        return real_advance(*args, **kwargs)

    monkeypatch.setattr(store, "sync", sync)
    monkeypatch.setattr(store, "open_writer", open_writer)
    monkeypatch.setattr(merges, "advance_branch", advance)
    repo.merge("run", "main")
    table_files = [key for key, _ in opened if key.startswith("data/iceberg/")]
    assert any(key.endswith(".metadata.json") for key in table_files)
    assert any("/snap-" in key for key in table_files)  # a replayed manifest list
    assert all(not durable for key, durable in opened if key in table_files)
    kinds = [kind for kind, _ in events]
    assert kinds.index("advance") > 0
    synced = {
        key for kind, keys in events[: kinds.index("advance")] if kind == "sync" for key in keys
    }
    assert set(table_files) <= synced
    together = [keys for kind, keys in events if kind == "sync" and set(table_files) <= set(keys)]
    assert together and any(key.startswith("_graveler/") for key in together[0])
