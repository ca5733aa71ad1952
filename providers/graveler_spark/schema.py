"""Schemas of a read, merged and checked the way Spark's Parquet source does it.

* Every column read from files is nullable (Spark reads file sources ``asNullable``): a column
  that one file lacks is null in that file's rows.
* ``mergeSchema``: columns of all files, in order of first appearance. A column whose type
  differs between files is an error (:class:`SchemaConflict`, Spark's
  ``CANNOT_MERGE_INCOMPATIBLE_DATA_TYPE``), except where Spark merges: decimals of one scale
  (the larger precision wins), and arrays, maps and structs whose parts merge.
* Without ``mergeSchema`` the first file's schema is the read's; another file whose column has
  a different type is read only when Spark's Parquet reader would widen it (a smaller integer
  to a larger one or to double, float to double, date to timestamp, a decimal to one that holds
  it), else the read fails with :class:`SchemaConflict` naming the file and column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from graveler.errors import InvalidArgument

if TYPE_CHECKING:
    import pyarrow as pa


class SchemaConflict(InvalidArgument):
    """Files of one read disagree on a column's type in a way Spark does not reconcile."""


def merge_schemas(schemas: Sequence[tuple[str, pa.Schema]]) -> pa.Schema:
    """The merged, all-nullable schema of ``(path, schema)`` pairs (first file's order)."""
    import pyarrow as pa

    fields: dict[str, pa.Field] = {}
    origin: dict[str, str] = {}
    for path, schema in schemas:
        for f in schema:
            if f.name not in fields:
                fields[f.name], origin[f.name] = f.with_nullable(True), path
                continue
            try:
                merged = merge_types(fields[f.name].type, f.type)
            except SchemaConflict:
                raise SchemaConflict(
                    f"cannot merge column {f.name!r}: {fields[f.name].type} in "
                    f"{origin[f.name]!r} and {f.type} in {path!r} (Spark's Parquet source "
                    "refuses this too; cast the column in one of the writes)"
                ) from None
            fields[f.name] = pa.field(f.name, merged, nullable=True)
    return pa.schema(list(fields.values()))


def merge_types(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """Spark's ``StructType.merge`` for two column types; raises SchemaConflict."""
    import pyarrow as pa
    import pyarrow.types as t

    if a.equals(b):
        return a
    if t.is_decimal(a) and t.is_decimal(b) and a.scale == b.scale:
        return pa.decimal128(max(a.precision, b.precision), a.scale)
    if _is_list(a) and _is_list(b):
        return pa.list_(merge_types(a.value_type, b.value_type))
    if t.is_map(a) and t.is_map(b):
        return pa.map_(merge_types(a.key_type, b.key_type), merge_types(a.item_type, b.item_type))
    if t.is_struct(a) and t.is_struct(b):
        inner = merge_schemas([("", pa.schema(list(a))), ("", pa.schema(list(b)))])
        return pa.struct(list(inner))
    raise SchemaConflict(f"incompatible types {a} and {b}")


def _is_list(kind: pa.DataType) -> bool:
    import pyarrow.types as t

    return bool(t.is_list(kind) or t.is_large_list(kind))


def readable_as(found: pa.DataType, wanted: pa.DataType) -> bool:
    """Whether Spark's Parquet reader reads a file column of type ``found`` as ``wanted``."""
    import pyarrow.types as t

    if found.equals(wanted):
        return True
    if t.is_integer(found) and t.is_integer(wanted):
        return bool(found.bit_width <= wanted.bit_width)
    if (t.is_integer(found) or t.is_float32(found)) and t.is_float64(wanted):
        return True
    if t.is_date(found) and t.is_timestamp(wanted):
        return True
    if t.is_decimal(found) and t.is_decimal(wanted):
        return bool(
            wanted.scale >= found.scale
            and wanted.precision - wanted.scale >= found.precision - found.scale
        )
    if (t.is_string(found) and t.is_large_string(wanted)) or (
        t.is_timestamp(found) and t.is_timestamp(wanted)
    ):
        return True
    return (_is_list(found) and _is_list(wanted)) or (t.is_struct(found) and t.is_struct(wanted))


def with_partitions(
    data: pa.Schema, columns: Sequence[str], types: Sequence[pa.DataType]
) -> pa.Schema:
    """``data`` without any column named like a partition column, then the partition
    columns (nullable), as Spark lays out a partitioned table."""
    import pyarrow as pa

    kept = [f for f in data if f.name not in set(columns)]
    parts = [pa.field(c, kind, nullable=True) for c, kind in zip(columns, types, strict=True)]
    return pa.schema(kept + parts)
