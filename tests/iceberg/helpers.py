"""Shared pieces of the Iceberg suites: a partitioned test table and its rows."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import IntegerType, LongType, NestedField, StringType

from graveler.repository import Repository
from graveler.tables.iceberg import GravelerCatalog

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "p", IntegerType(), required=False),
    NestedField(3, "v", StringType(), required=False),
)
SPEC = PartitionSpec(
    PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="p")
)
ARROW = pa.schema([("id", pa.int64()), ("p", pa.int32()), ("v", pa.string())])


def rows(ids: list[int], p: int, v: str = "x") -> pa.Table:
    """Rows ``ids`` in partition ``p`` with value ``v``."""
    return pa.Table.from_pylist([{"id": i, "p": p, "v": v} for i in ids], schema=ARROW)


def content(table: Table, snapshot_id: int | None = None) -> list[tuple[Any, ...]]:
    """The table's rows (at a snapshot), sorted."""
    data = table.scan(snapshot_id=snapshot_id).to_arrow().to_pylist()
    return sorted(tuple(r.values()) for r in data)


def forked_catalog(repo: Repository) -> GravelerCatalog:
    """A catalog over ``repo`` whose ``main`` has table ``db.t`` (partitioned by ``p``) with
    one append, and a branch ``run`` forked from it."""
    cat = GravelerCatalog("test", repo)
    cat.create_namespace(("main", "db"))
    cat.create_table("main.db.t", SCHEMA, partition_spec=SPEC).append(rows([1, 2], 1))
    repo.create_branch("run", "main")
    return cat
