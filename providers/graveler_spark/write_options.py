"""Write options of the data source that shape the table: format, partitioning, overwrite mode.

=========================  ==========================================================
``format``                 ``parquet`` (default), ``csv`` or ``json`` (JSON lines)
``partitionBy``            comma-separated partition columns (Spark's own option name;
                           ``.partitionBy("a", "b")`` sets it when the JVM shim is loaded)
``partitionOverwriteMode`` ``static`` (default: an overwrite replaces the whole table) or
                           ``dynamic`` (only the partitions the write produces); the JVM
                           shim fills it from ``spark.sql.sources.partitionOverwriteMode``
``header``, ``delimiter``  CSV: header line (default true, as the reader expects), separator
=========================  ==========================================================

Every check runs on the driver before a task starts, so a bad option writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graveler.errors import InvalidArgument
from graveler_spark.options import delimiter, flag
from graveler_spark.sinks import check_format

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

OVERWRITE_MODES = ("static", "dynamic")


def write_options(options: Mapping[str, str], schema: StructType) -> dict[str, Any]:
    """The :class:`graveler_spark.job.WriteJob` fields these options set, checked against the
    DataFrame's ``schema``; raises InvalidArgument."""
    partition_by = partition_columns(options.get("partitionBy") or "", schema)
    mode = (options.get("partitionOverwriteMode") or "static").strip().lower()
    if mode not in OVERWRITE_MODES:
        raise InvalidArgument(
            f"option 'partitionOverwriteMode' must be static or dynamic, got {mode!r}"
        )
    return {
        "partition_by": partition_by,
        "dynamic": mode == "dynamic",
        "format": check_format(options.get("format") or "parquet"),
        "header": flag(options, "header", True),
        "delimiter": delimiter(options),
    }


def partition_columns(raw: str, schema: StructType) -> tuple[str, ...]:
    """The columns named in ``raw`` (comma-separated), as the schema spells them."""
    from pyspark.sql.types import ArrayType, BinaryType, MapType, StructType

    names = [n.strip() for n in raw.split(",") if n.strip()]
    by_lower = {f.name.lower(): f for f in schema.fields}
    columns: list[str] = []
    for name in names:
        field = by_lower.get(name.lower())
        if field is None:
            raise InvalidArgument(
                f"partition column {name!r} is not a column of the DataFrame "
                f"({', '.join(schema.fieldNames())})"
            )
        if isinstance(field.dataType, ArrayType | MapType | StructType | BinaryType):
            raise InvalidArgument(
                f"cannot partition by {field.name!r}: {field.dataType.simpleString()} columns "
                "cannot be partition columns"
            )
        if field.name in columns:
            raise InvalidArgument(f"partition column {field.name!r} is named twice")
        columns.append(field.name)
    if columns and len(columns) == len(schema.fields):
        raise InvalidArgument("cannot partition by every column: no data columns would remain")
    return tuple(columns)
