"""Tables in the IO manager: Dagster's table metadata and column selection.

* :func:`column_schema`: a ``dagster.TableSchema`` (column names and types) of a pandas or
  polars DataFrame or a pyarrow Table, for the ``dagster/column_schema`` metadata;
* :func:`read_columns`: only some columns of a stored Parquet value (``columns`` input
  metadata, as in dagster-duckdb and dagster-deltalake), read with Parquet's column
  projection; an unknown column is an :class:`graveler.errors.InvalidArgument` naming it.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Sequence
from typing import Any

from dagster import TableColumn, TableSchema

from graveler.errors import InvalidArgument

#: Input metadata naming the columns to load.
COLUMNS_KEY = "columns"


def column_schema(value: Any, fmt: str) -> TableSchema:
    """The columns of ``value``, a frame of format ``fmt`` ("pandas", "polars", "pyarrow")."""
    if fmt == "pandas":
        pairs = [(str(n), str(t)) for n, t in value.dtypes.items()]
    elif fmt == "polars":
        pairs = [(str(n), str(t)) for n, t in value.schema.items()]
    else:
        pairs = [(f.name, str(f.type)) for f in value.schema]
    return TableSchema(columns=[TableColumn(name=n, type=t) for n, t in pairs])


def wanted_columns(metadata: Any) -> list[str] | None:
    """The ``columns`` an input's metadata asks for (None: all); InvalidArgument when it is
    not a list of names."""
    columns = (metadata or {}).get(COLUMNS_KEY)
    if columns is None:
        return None
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise InvalidArgument(
            f"input metadata 'columns' must be a list of column names, not {columns!r}"
        )
    return list(columns)


def read_columns(
    data: bytes, written: str, wanted: str | None, columns: Sequence[str], where: str
) -> Any:
    """``columns`` of the Parquet bytes ``data`` (written as frame format ``written``), as frame
    format ``wanted`` (default: as written). ``where`` names the object in errors."""
    pq = importlib.import_module("pyarrow.parquet")
    names = pq.read_schema(io.BytesIO(data)).names
    missing = [c for c in columns if c not in names]
    if missing:
        raise InvalidArgument(f"{where} has no column(s) {missing}; it has {names}")
    target = wanted or written
    table = pq.read_table(
        io.BytesIO(data), columns=list(columns), use_pandas_metadata=target == "pandas"
    )
    if target == "pandas":
        return table.to_pandas()
    if target == "polars":
        return importlib.import_module("polars").from_arrow(table)
    return table
