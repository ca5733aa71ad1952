"""File writers for one output file of a Spark task: Parquet, CSV, JSON lines (pyarrow).

Each takes Arrow batches and writes them into a binary file object (the object store's
writer, committed once the sink is closed; closing a sink never closes it). Parquet uses the
job's codec and the dictionary choice the task made on its first batch; CSV writes a header
line unless ``header=false``; JSON writes one object per line (dates and timestamps in ISO
8601, decimals as numbers, binary as base64), as Spark's JSON writer does.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from graveler.errors import InvalidArgument

if TYPE_CHECKING:
    import pyarrow as pa

    from graveler_spark.job import WriteJob

WRITE_FORMATS = ("parquet", "csv", "json")


class Writable(Protocol):
    """Where a sink writes: a binary file object (``ObjectStore.open_writer``'s writer)."""

    def write(self, data: bytes, /) -> int: ...


class FileSink(Protocol):
    def write(self, batch: pa.RecordBatch) -> None: ...

    def close(self) -> None: ...


def check_format(name: str) -> str:
    """The normalized write format; raises InvalidArgument for one we do not write."""
    fmt = name.strip().lower()
    if fmt not in WRITE_FORMATS:
        raise InvalidArgument(
            f"the graveler data source writes {', '.join(WRITE_FORMATS)}, not {name!r}; for "
            "other formats use graveler_spark.write_native(df, uri, format=...)"
        )
    return fmt


def open_sink(
    job: WriteJob, target: Writable, schema: pa.Schema, dictionary: list[str]
) -> FileSink:
    """A writer of ``job.format`` into ``target`` (left open when the sink closes)."""
    if job.format == "csv":
        return CsvSink(target, schema, job.header, job.delimiter)
    if job.format == "json":
        return JsonSink(target)
    import pyarrow.parquet as pq

    writer: FileSink = pq.ParquetWriter(
        target, schema, compression=job.compression, use_dictionary=dictionary
    )
    return writer


class CsvSink:
    def __init__(self, target: Writable, schema: pa.Schema, header: bool, delimiter: str) -> None:
        import pyarrow.csv as pcsv

        options = pcsv.WriteOptions(include_header=header, delimiter=delimiter)
        self._writer = pcsv.CSVWriter(target, schema, write_options=options)

    def write(self, batch: pa.RecordBatch) -> None:
        self._writer.write_batch(batch)

    def close(self) -> None:
        self._writer.close()


class JsonSink:
    def __init__(self, target: Writable) -> None:
        self._file = target

    def write(self, batch: pa.RecordBatch) -> None:
        lines = (
            json.dumps({k: v for k, v in row.items() if v is not None}, default=_json_value)
            for row in batch.to_pylist()
        )
        self._file.write("".join(f"{line}\n" for line in lines).encode())

    def close(self) -> None:
        """Nothing to flush: every batch went to the target as it came."""


def _json_value(value: Any) -> Any:
    """Values ``json`` cannot encode, as Spark's JSON writer spells them."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
