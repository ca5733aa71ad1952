"""The Iceberg catalog's engine, through the in-process pyiceberg catalog: namespaces and
tables as commits on branches, the tree they leave, reads at refs, and bad input refused
with nothing changed."""

from __future__ import annotations

import json
import threading

import pyarrow as pa
import pytest
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.update import AddSnapshotUpdate, SetSnapshotRefUpdate
from pyiceberg.types import StringType

from graveler.client import Graveler
from graveler.core.errors import (
    InvalidArgument,
    InvalidName,
    MergeConflict,
    ProtectedBranch,
    ReadOnlyRef,
)
from graveler.repository import Repository
from graveler.tables.iceberg import GravelerCatalog
from graveler.tables.iceberg.names import POINTER, TableName
from tests.iceberg.helpers import ARROW, SCHEMA, SPEC, content, rows

NOTED = ARROW.append(pa.field("note", pa.string()))


@pytest.fixture
def catalog(repo: Repository) -> GravelerCatalog:
    cat = GravelerCatalog("test", repo, committer="tester")
    cat.create_namespace(("main", "db"))
    return cat


def test_namespaces_are_folders_with_properties(catalog: GravelerCatalog, repo: Repository):
    catalog.create_namespace(("main", "db", "inner"), {"owner": "ana"})
    assert catalog.list_namespaces(("main",)) == [("main", "db")]
    assert catalog.list_namespaces(("main", "db")) == [("main", "db", "inner")]
    assert catalog.list_namespaces() == [("main",)]
    assert catalog.load_namespace_properties(("main", "db", "inner")) == {"owner": "ana"}
    inner = ("main", "db", "inner")
    summary = catalog.update_namespace_properties(inner, {"owner", "x"}, {"k": "v"})
    assert summary.removed == ["owner"] and summary.missing == ["x"] and summary.updated == ["k"]
    assert catalog.load_namespace_properties(("main", "db", "inner")) == {"k": "v"}
    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace(("main", "db"))
    with pytest.raises(NoSuchNamespaceError):
        catalog.create_namespace(("main", "nope", "child"))
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace(("main", "db"))
    catalog.drop_namespace(("main", "db", "inner"))
    assert catalog.list_namespaces(("main", "db")) == []
    messages = [c.message for c in repo.log("main", amount=5)]
    assert messages[0] == "iceberg: drop namespace db.inner"
    assert "iceberg: create namespace db.inner" in messages
    props = catalog.load_namespace_properties(("main",))
    assert props["graveler.branch"] == "main" and len(props["graveler.commit"]) == 64


def test_table_lifecycle_leaves_its_files_in_the_tree(catalog: GravelerCatalog, repo: Repository):
    table = catalog.create_table("main.db.orders", SCHEMA, partition_spec=SPEC)
    table.append(rows([1, 2], 1))
    table.append(rows([3], 2))
    table = catalog.load_table("main.db.orders")
    assert content(table) == [(1, 1, "x"), (2, 1, "x"), (3, 2, "x")]
    paths = {e.path for e in repo.iter_objects("main", prefix="db/orders/")}
    assert "db/orders/" + POINTER in paths
    data = [p for p in paths if p.endswith(".parquet")]
    assert len(data) == 2 and all(p.startswith("db/orders/data/p=") for p in data)
    pointer = repo.stat("main", "db/orders/" + POINTER)
    assert table.metadata_location.endswith(pointer.physical_address)
    assert pointer.physical_address.startswith("data/iceberg/")
    assert json.loads(repo.get("main", "db/orders/" + POINTER))["table-uuid"] == str(
        table.metadata.table_uuid
    )
    head = next(iter(repo.log("main", amount=1)))
    assert head.committer == "tester" and "operation append" in head.message
    assert catalog.list_tables(("main", "db")) == [("main", "db", "orders")]


def test_overwrite_delete_and_schema_evolution(catalog: GravelerCatalog):
    table = catalog.create_table("main.db.t", SCHEMA, partition_spec=SPEC)
    table.append(rows([1, 2, 3], 1))
    table.append(rows([4], 2))
    table.delete("id = 2")
    table.overwrite(rows([9], 2), overwrite_filter="p = 2")
    with table.update_schema() as update:
        update.add_column("note", StringType())
    table = catalog.load_table("main.db.t")
    table.append(pa.Table.from_pylist([{"id": 7, "p": 1, "v": "y", "note": "n"}], schema=NOTED))
    assert content(catalog.load_table("main.db.t")) == [
        (1, 1, "x", None),
        (3, 1, "x", None),
        (7, 1, "y", "n"),
        (9, 2, "x", None),
    ]
    assert [f.name for f in table.schema().fields] == ["id", "p", "v", "note"]


def test_reads_at_tags_and_commits_and_writes_only_on_branches(
    catalog: GravelerCatalog, repo: Repository
):
    table = catalog.create_table("main.db.t", SCHEMA)
    table.append(rows([1], 1))
    first = repo.branch("main").commit_id
    repo.create_tag("v1", "main")
    catalog.load_table("main.db.t").append(rows([2], 1))
    assert content(catalog.load_table("v1.db.t")) == [(1, 1, "x")]
    assert content(catalog.load_table(f"{first}.db.t")) == [(1, 1, "x")]
    assert content(catalog.load_table("main~1.db.t")) == [(1, 1, "x")]
    assert content(catalog.load_table("main.db.t")) == [(1, 1, "x"), (2, 1, "x")]
    tagged = catalog.load_table("v1.db.t")
    with pytest.raises(ReadOnlyRef):
        tagged.append(rows([3], 1))
    with pytest.raises(ReadOnlyRef):
        catalog.create_namespace(("v1", "other"))
    assert repo.tag("v1").commit_id == first


def test_rename_drop_and_register(catalog: GravelerCatalog, repo: Repository):
    table = catalog.create_table("main.db.t", SCHEMA)
    table.append(rows([1], 1))
    location = catalog.load_table("main.db.t").metadata_location
    catalog.create_namespace(("main", "other"))
    catalog.rename_table("main.db.t", "main.other.u")
    assert not catalog.table_exists("main.db.t")
    assert content(catalog.load_table("main.other.u")) == [(1, 1, "x")]
    assert not list(repo.iter_objects("main", prefix="db/t/"))
    catalog.drop_table("main.other.u")
    with pytest.raises(NoSuchTableError):
        catalog.load_table("main.other.u")
    registered = catalog.register_table("main.db.back", location)
    assert content(registered) == [(1, 1, "x")]
    assert any(e.path.endswith(".parquet") for e in repo.iter_objects("main", prefix="db/back/"))
    with pytest.raises(TableAlreadyExistsError):
        catalog.register_table("main.db.back", location)


def test_tables_and_namespaces_do_not_share_a_name(catalog: GravelerCatalog):
    catalog.create_table("main.db.t", SCHEMA)
    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace(("main", "db", "t"))
    catalog.create_namespace(("main", "db", "n"))
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table("main.db.n", SCHEMA)
    with pytest.raises(NoSuchNamespaceError):
        catalog.create_table("main.missing.t", SCHEMA)


@pytest.mark.parametrize(
    "identifier",
    ["main.db.../x", "main.db.a/b", "main.db.", "main.db.-x", "main.db.ta\u200bble", "main..t"],
)
def test_bad_names_are_refused(catalog: GravelerCatalog, identifier: str):
    with pytest.raises((InvalidName, NoSuchTableError, ValueError)):
        catalog.create_table(identifier, SCHEMA)


def test_files_outside_the_namespace_are_refused_and_nothing_changes(
    catalog: GravelerCatalog, repo: Repository, tmp_path
):
    table = catalog.create_table("main.db.t", SCHEMA)
    head = repo.branch("main").commit_id
    outside = tmp_path / "evil.avro"
    outside.write_bytes(b"not a manifest list")
    for where in (outside.as_uri(), "/etc/passwd", f"{repo.info.storage_namespace}/_graveler/x"):
        snapshot = Snapshot(
            snapshot_id=42,
            sequence_number=1,
            timestamp_ms=1,
            manifest_list=where,
            summary=Summary(Operation.APPEND),
            schema_id=0,
        )
        updates = (
            AddSnapshotUpdate(snapshot=snapshot),
            SetSnapshotRefUpdate(ref_name="main", type="branch", snapshot_id=42),
        )
        with pytest.raises(InvalidArgument):
            catalog.engine.commit_table("main", TableName(("db",), "t"), (), updates)
    with pytest.raises(InvalidArgument):
        catalog.create_table("main.db.u", SCHEMA, location=outside.parent.as_uri())
    assert repo.branch("main").commit_id == head
    assert catalog.load_table("main.db.t").metadata.snapshots == table.metadata.snapshots


def test_protected_branches_refuse_table_commits(catalog: GravelerCatalog, repo: Repository):
    catalog.create_table("main.db.t", SCHEMA)
    repo.protect_branch("main")
    with pytest.raises(ProtectedBranch):
        catalog.load_table("main.db.t").append(rows([1], 1))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_catalog(request: pytest.FixtureRequest, tmp_path) -> GravelerCatalog:
    url = f"sqlite:///{tmp_path / 'race.db'}"
    if request.param == "postgres":
        url = request.getfixturevalue("pg_schema_url")
    client = Graveler(home=tmp_path / "race", database_url=url)
    request.addfinalizer(client.close)
    repo = client.create_repository("race", (tmp_path / "race-ns").as_uri())
    cat = GravelerCatalog("race", repo)
    cat.create_namespace(("main", "db"))
    return cat


@pytest.mark.parametrize(("retries", "expected"), [("0", ["conflict", "ok"]), ("4", ["ok", "ok"])])
def test_racing_commits_on_one_table_one_wins(
    any_catalog: GravelerCatalog, retries: str, expected: list[str]
):
    """Two writers load the table, both append: one commit lands, the other fails with
    CommitFailedException (the REST catalog's 409) and lands nothing; with pyiceberg's
    commit retries on, the loser reapplies its append on the new state and lands too."""
    catalog = any_catalog
    props = {"commit.retry.num-retries": retries}
    catalog.create_table("main.db.t", SCHEMA, properties=props).append(rows([0], 1))
    loaded = [catalog.load_table("main.db.t") for _ in range(2)]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def write(i: int) -> None:
        barrier.wait()
        try:
            loaded[i].append(rows([i + 1], 1))
            outcomes.append("ok")
        except CommitFailedException:
            outcomes.append("conflict")

    threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == expected
    assert len(content(catalog.load_table("main.db.t"))) == 1 + expected.count("ok")


def test_commits_on_different_tables_of_one_branch_all_land(catalog: GravelerCatalog):
    for name in ("a", "b", "c"):
        catalog.create_table(f"main.db.{name}", SCHEMA)
    loaded = [catalog.load_table(f"main.db.{n}") for n in ("a", "b", "c")]
    barrier = threading.Barrier(3)

    def write(i: int) -> None:
        barrier.wait()
        loaded[i].append(rows([i], 1))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name in ("a", "b", "c"):
        assert len(content(catalog.load_table(f"main.db.{name}"))) == 1


def test_create_transaction_commits_with_assert_create(catalog: GravelerCatalog):
    with catalog.create_table_transaction("main.db.staged", SCHEMA) as tx:
        tx.append(rows([5], 1))
    assert content(catalog.load_table("main.db.staged")) == [(5, 1, "x")]
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table_transaction("main.db.staged", SCHEMA)
    late = catalog.create_table_transaction("main.db.late", SCHEMA)
    late.append(rows([6], 1))
    catalog.create_table("main.db.late", SCHEMA)  # created meanwhile
    with pytest.raises(CommitFailedException):
        late.commit_transaction()
    assert content(catalog.load_table("main.db.late")) == []


def test_revert_and_cherry_pick_of_table_commits(catalog: GravelerCatalog, repo: Repository):
    """A table commit is a commit: reverting it restores the table's previous version, and
    cherry-picking it onto a branch whose table is where the commit started applies it; a
    table changed since on the target is a conflict on its pointer, never a mix."""
    catalog.create_table("main.db.t", SCHEMA).append(rows([1], 1))
    repo.create_branch("side", "main")
    catalog.load_table("main.db.t").append(rows([2], 1))
    appended = repo.branch("main").commit_id
    repo.cherry_pick("side", appended)
    assert content(catalog.load_table("side.db.t")) == [(1, 1, "x"), (2, 1, "x")]
    repo.revert("main", appended)
    assert content(catalog.load_table("main.db.t")) == [(1, 1, "x")]
    assert len(list(repo.iter_objects("main", prefix="db/t/data/"))) == 1
    catalog.load_table("side.db.t").append(rows([3], 1))
    with pytest.raises(MergeConflict):
        repo.revert("side", appended)
    assert content(catalog.load_table("side.db.t")) == [(1, 1, "x"), (2, 1, "x"), (3, 1, "x")]
