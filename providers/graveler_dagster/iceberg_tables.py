"""The Iceberg work of :class:`graveler_dagster.iceberg.GravelerIcebergIOManager`: values as
Arrow tables, partitions as Iceberg filters and specs, and one table commit per output
through graveler's in-process catalog. Imported on first use (pyiceberg, pyarrow)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from typing import Any

import pyarrow as pa
from dagster import (
    InputContext,
    OutputContext,
    PartitionsDefinition,
    TimeWindowPartitionsDefinition,
)
from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError
from pyiceberg.expressions import (
    AlwaysTrue,
    And,
    BooleanExpression,
    GreaterThanOrEqual,
    In,
    LessThan,
    Or,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema, assign_fresh_schema_ids
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import DateType, TimestamptzType

from graveler import Repository
from graveler.errors import InvalidArgument, TableNotFound
from graveler.tables.iceberg import GravelerCatalog

POINTER = "metadata/current.metadata.json"
PARTITION_EXPR = "partition_expr"
WRITE_MODE = "write_mode"
MODES = ("overwrite", "append")


def pointer_of(levels: Sequence[str]) -> str:
    """The tree key of the table's current-metadata pointer."""
    return "/".join(levels) + "/" + POINTER


def to_arrow(value: Any) -> pa.Table:
    """A pyarrow Table of a pyarrow Table or a pandas / polars DataFrame (nanosecond times
    become microseconds, Iceberg's resolution)."""
    if isinstance(value, pa.Table):
        table = value
    else:
        root = type(value).__module__.split(".", 1)[0]
        if root == "pandas":
            table = pa.Table.from_pandas(value, preserve_index=False)
        elif root == "polars":
            table = value.to_arrow()
        else:
            raise InvalidArgument(
                f"GravelerIcebergIOManager stores tables (pyarrow, pandas, polars), not "
                f"{type(value).__name__}"
            )
    fields = [_microseconds(f) for f in table.schema]
    return table.cast(pa.schema(fields)) if fields != list(table.schema) else table


def _microseconds(field: pa.Field) -> pa.Field:
    if pa.types.is_timestamp(field.type) and field.type.unit == "ns":
        return field.with_type(pa.timestamp("us", tz=field.type.tz))
    if pa.types.is_large_string(field.type):
        return field.with_type(pa.string())
    return field


def convert(table: pa.Table, wanted: str | None) -> Any:
    """``table`` as the frame format an input asks for (default: pyarrow)."""
    if wanted == "pandas":
        return table.to_pandas()
    if wanted == "polars":
        return importlib.import_module("polars").from_arrow(table)
    return table


@dataclass(frozen=True)
class Target:
    """What part of the table an output writes or an input reads."""

    column: str | None
    partitions: PartitionsDefinition[Any] | None
    keys: tuple[str, ...]
    mode: str = "overwrite"

    @classmethod
    def of(cls, context: OutputContext, metadata: Mapping[str, Any] | None) -> Target:
        meta = metadata or {}
        mode = str(meta.get(WRITE_MODE, "overwrite"))
        if mode not in MODES:
            raise InvalidArgument(f"write_mode must be one of {MODES}, not {mode!r}")
        if not context.has_asset_partitions:
            return cls(None, None, (), mode)
        keys = tuple(context.asset_partition_keys)
        return cls(_column(meta), context.asset_partitions_def, keys, mode)

    @classmethod
    def reading(cls, context: InputContext, metadata: Mapping[str, Any] | None) -> Target:
        if not context.has_asset_partitions:
            return cls(None, None, ())
        keys = tuple(context.asset_partition_keys)
        return cls(_column(metadata or {}), context.asset_partitions_def, keys)

    def spec(self, schema: Schema) -> PartitionSpec:
        if self.column is None:
            return PartitionSpec()
        source = schema.find_field(self.column).field_id
        transform: Any = DayTransform() if self._windows() else IdentityTransform()
        name = f"{self.column}_day" if self._windows() else self.column
        return PartitionSpec(PartitionField(source, 1000, transform, name))

    def filter(self, schema: Schema, keys: Sequence[str | None] | None = None) -> BooleanExpression:
        """Rows of the partitions ``keys`` (default: this target's); everything when the
        asset is not partitioned."""
        wanted = [k for k in (keys if keys is not None else self.keys) if k is not None]
        if self.column is None or not wanted:
            return AlwaysTrue()
        if not self._windows():
            member: Any = In
            return member(self.column, set(wanted))  # type: ignore[no-any-return]
        kind = schema.find_field(self.column).field_type
        windows = [self.partitions.time_window_for_partition_key(k) for k in wanted]  # type: ignore[union-attr]
        ranges = [
            _between(self.column, _literal(w.start, kind), _literal(w.end, kind)) for w in windows
        ]
        return reduce(_or, ranges)

    def _windows(self) -> bool:
        return isinstance(self.partitions, TimeWindowPartitionsDefinition)


def _between(column: str, start: str, end: str) -> BooleanExpression:
    """``start <= column < end`` (pyiceberg's expression models confuse type checkers)."""
    low: Any = GreaterThanOrEqual
    high: Any = LessThan
    return And(low(column, start), high(column, end))


def _or(left: BooleanExpression, right: BooleanExpression) -> BooleanExpression:
    return Or(left, right)


def _column(meta: Mapping[str, Any]) -> str:
    column = meta.get(PARTITION_EXPR)
    if not isinstance(column, str) or not column:
        raise InvalidArgument(
            "a partitioned Iceberg asset names its partition column in definition metadata "
            "'partition_expr'"
        )
    return column


def _literal(when: datetime, kind: Any) -> str:
    if isinstance(kind, DateType):
        return when.date().isoformat()
    if isinstance(kind, TimestamptzType):
        return when.isoformat()
    return when.replace(tzinfo=None).isoformat()


@dataclass(frozen=True)
class Written:
    commit_id: str
    snapshot_id: int | None
    metadata_location: str


def write(
    repo: Repository,
    branch: str,
    levels: Sequence[str],
    data: pa.Table,
    target: Target,
    labels: Mapping[str, str],
) -> Written:
    """Write ``data`` to the table ``levels`` on ``branch`` in one table commit (created
    with its first output)."""
    catalog = GravelerCatalog("dagster", repo, committer="dagster", labels=labels)
    ident = (branch, *levels)
    for depth in range(1, len(levels)):
        with contextlib.suppress(NamespaceAlreadyExistsError):
            catalog.create_namespace((branch, *levels[:depth]))
    schema = assign_fresh_schema_ids(catalog._convert_schema_if_needed(data.schema))
    try:
        table = catalog.load_table(ident)
        with table.transaction() as tx:
            missing = [f for f in data.schema.names if f not in table.schema().column_names]
            if missing:
                with tx.update_schema() as update:
                    update.union_by_name(schema)
            _write(tx, data, target, table.schema())
    except NoSuchTableError:
        spec = target.spec(schema)
        with catalog.create_table_transaction(ident, schema, partition_spec=spec) as tx:
            _write(tx, data, target, schema)
    done = catalog.load_table(ident)
    commit = catalog.engine.last_commit
    assert commit is not None
    return Written(commit, done.metadata.current_snapshot_id, done.metadata_location)


def _write(tx: Any, data: pa.Table, target: Target, schema: Schema) -> None:
    if target.mode == "append":
        tx.append(data)
    elif target.column is None:
        tx.overwrite(data)
    else:
        tx.overwrite(data, overwrite_filter=target.filter(schema))


def read(
    repo: Repository,
    levels: Sequence[str],
    by_commit: Mapping[str, Sequence[str | None]],
    target: Target,
    columns: Sequence[str] | None,
) -> pa.Table:
    """The rows of the partitions each commit is read for (only ``columns`` when given)."""
    catalog = GravelerCatalog("dagster", repo)
    parts = []
    for commit, keys in by_commit.items():
        try:
            table = catalog.load_table((commit, *levels))
        except NoSuchTableError as exc:
            raise TableNotFound(str(exc)) from exc
        missing = [c for c in columns or () if c not in table.schema().column_names]
        if missing:
            raise InvalidArgument(f"table {'.'.join(levels)} has no column(s) {missing}")
        selected = tuple(columns) if columns else ("*",)
        scan = table.scan(row_filter=target.filter(table.schema(), keys), selected_fields=selected)
        parts.append(scan.to_arrow())
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="default")
