"""File formats the data source reads (Parquet, CSV, JSON lines) with pyarrow.

Options: ``format`` (``parquet`` by default, ``csv`` or ``json``), ``header`` and
``delimiter`` for CSV, ``batch_rows`` (rows per Arrow batch). Every file of one read is
parsed with the same Arrow schema (inferred from the first file unless given), and every
batch is conformed to the exact Arrow layout Spark expects for the DataFrame's schema.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graveler.errors import InvalidArgument
from graveler_spark.options import delimiter, flag, integer

if TYPE_CHECKING:
    import pyarrow as pa

FORMATS = ("parquet", "csv", "json")
DEFAULT_BATCH_ROWS = 131_072


@dataclass(frozen=True)
class ReadFormat:
    """How to parse the files of one read; picklable."""

    name: str = "parquet"
    header: bool = True
    delimiter: str = ","
    batch_rows: int = DEFAULT_BATCH_ROWS

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> ReadFormat:
        name = (options.get("format") or "parquet").strip().lower()
        if name not in FORMATS:
            raise InvalidArgument(f"format {name!r} is not readable; use one of {FORMATS}")
        return cls(
            name=name,
            header=flag(options, "header", True),
            delimiter=delimiter(options),
            batch_rows=integer(options, "batch_rows", DEFAULT_BATCH_ROWS, minimum=1),
        )

    def schema(self, source: Any) -> pa.Schema:
        """The Arrow schema of one file (Parquet footer, or inferred from the first block)."""
        if self.name == "parquet":
            import pyarrow.parquet as pq

            return pq.read_schema(source)
        if self.name == "csv":
            with self._open_csv(source, None) as reader:
                return reader.schema
        return self._read_json(source, None).schema

    def batches(
        self,
        source: Any,
        schema: pa.Schema,
        row_groups: Sequence[int] | None = None,
        metadata: Any = None,
    ) -> Iterator[pa.RecordBatch]:
        """The file's rows as batches parsed with ``schema`` (a subset of row groups for a
        split Parquet file; ``metadata``: its footer, when already read)."""
        if self.name == "parquet":
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(source, memory_map=isinstance(source, str), metadata=metadata)
            columns = [n for n in schema.names if n in pf.schema_arrow.names]
            yield from pf.iter_batches(self.batch_rows, row_groups=row_groups, columns=columns)
        elif self.name == "csv":
            with self._open_csv(source, schema) as reader:
                yield from reader
        else:
            yield from self._read_json(source, schema).to_batches(self.batch_rows)

    def _open_csv(self, source: Any, schema: pa.Schema | None) -> Any:
        import pyarrow.csv as pcsv

        read = pcsv.ReadOptions(
            autogenerate_column_names=not self.header, block_size=1 << 22, use_threads=False
        )
        parse = pcsv.ParseOptions(delimiter=self.delimiter)
        convert = pcsv.ConvertOptions(column_types=schema) if schema is not None else None
        return pcsv.open_csv(
            source, read_options=read, parse_options=parse, convert_options=convert
        )

    def _read_json(self, source: Any, schema: pa.Schema | None) -> pa.Table:
        import pyarrow.json as pjson

        parse = pjson.ParseOptions(explicit_schema=schema) if schema is not None else None
        return pjson.read_json(source, parse_options=parse)


def conform(
    batch: pa.RecordBatch,
    target: pa.Schema,
    constants: Mapping[str, tuple[Any, pa.DataType]] | None = None,
    strict: str | None = None,
) -> pa.RecordBatch:
    """``batch`` with exactly ``target``'s columns, order and types, which is what Spark checks
    a data source's Arrow batches against: missing columns are null, ``constants`` (name ->
    (value, type), the partition values) fill their columns. With ``strict`` (the file's
    path), a column is converted only where Spark's Parquet reader would widen it
    (:func:`graveler_spark.schema.readable_as`); otherwise SchemaConflict."""
    import pyarrow as pa

    if not constants and batch.schema.equals(target):
        return batch
    columns = []
    for f in target:
        if constants and f.name in constants:
            columns.append(_constant(constants[f.name], f.type, batch.num_rows))
            continue
        index = batch.schema.get_field_index(f.name)
        column = batch.column(index) if index >= 0 else pa.nulls(batch.num_rows, f.type)
        if column.type != f.type:
            if strict is not None:
                _check_readable(column.type, f, strict)
            column = column.cast(f.type)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=target)


def _constant(value: tuple[Any, pa.DataType], kind: pa.DataType, rows: int) -> pa.Array:
    """``rows`` copies of a partition value, converted to the read's type for the column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    raw, raw_type = value
    if raw is None:
        return pa.nulls(rows, kind)
    scalar = pa.scalar(raw, raw_type)
    if raw_type != kind:
        scalar = scalar.cast(kind)
    return pc.fill_null(pa.nulls(rows, kind), scalar)


def _check_readable(found: pa.DataType, field: pa.Field, path: str) -> None:
    from graveler_spark.schema import SchemaConflict, readable_as

    if not readable_as(found, field.type):
        raise SchemaConflict(
            f"column {field.name!r} is {found} in {path!r} but {field.type} in the read's "
            "schema (inferred from another file); read with mergeSchema to see the conflict, "
            "or pass .schema(...) to convert"
        )


def row_group_splits(source: Any, split_bytes: int) -> list[tuple[int, ...]]:
    """Consecutive row groups of a Parquet file packed into splits of about ``split_bytes``."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(source).metadata
    splits: list[tuple[int, ...]] = []
    current: list[int] = []
    size = 0
    for i in range(meta.num_row_groups):
        group = meta.row_group(i).total_byte_size
        if current and size + group > split_bytes:
            splits.append(tuple(current))
            current, size = [], 0
        current.append(i)
        size += group
    if current:
        splits.append(tuple(current))
    return splits
