"""Reading ``graveler://repo/ref/prefix`` with Spark: one snapshot, partitions by file.

The driver takes a :class:`~graveler_spark.snapshot.Snapshot` (ref resolved once, live files
listed once, partition columns discovered). Each file becomes one input partition; a Parquet
file larger than ``split_bytes`` (default 128 MiB) is split by row groups. Executors read the
physical files straight from the storage namespace with pyarrow, add the partition columns as
constants, and hand Spark Arrow batches.

:class:`PushdownReader` also implements ``pushFilters`` (PySpark 4.1+): filters on partition
columns prune files before any is opened, filters on data columns skip Parquet row groups whose
statistics rule them out. Spark calls ``pushFilters`` only when
``spark.sql.python.filterPushdown.enabled`` is true and *refuses to read* from a source whose
reader implements it while the setting is false, so the data source hands out a
:class:`PushdownReader` only when it knows the setting is on (see
:meth:`graveler_spark.datasource.GravelerDataSource.reader`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition

from graveler.errors import ObjectNotFound
from graveler_spark.formats import ReadFormat, conform, row_group_splits
from graveler_spark.pushdown import column_of, may_match, partition_match, split_filters
from graveler_spark.schema import merge_schemas, with_partitions
from graveler_spark.snapshot import FileRef, Snapshot
from graveler_spark.storage import open_source, store_for

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024


Piece = tuple[FileRef, "tuple[int, ...] | None"]  # a file, or some row groups of it
OPEN_COST_BYTES = 4 * 1024 * 1024  # what opening a file is worth, in bytes (Spark's default)


class FilePartition(InputPartition):
    """Some files (or row groups of one Parquet file) read by one task."""

    def __init__(self, pieces: Sequence[Piece]) -> None:
        super().__init__(tuple((f.path, groups) for f, groups in pieces))
        self.pieces = tuple(pieces)


def pack(
    pieces: Sequence[tuple[Piece, int]], parallelism: int, split_bytes: int
) -> list[FilePartition]:
    """Pieces (with their sizes) packed into partitions the way Spark packs small files:
    each piece costs its size plus ``OPEN_COST_BYTES``; a partition holds up to
    ``min(split_bytes, max(OPEN_COST_BYTES, total cost / parallelism))``, largest first."""
    total = sum(size + OPEN_COST_BYTES for _, size in pieces)
    limit = min(split_bytes, max(OPEN_COST_BYTES, total // max(parallelism, 1)))
    out: list[FilePartition] = []
    current: list[Piece] = []
    used = 0
    for piece, size in sorted(pieces, key=lambda p: -p[1]):
        if current and used + size > limit:
            out.append(FilePartition(current))
            current, used = [], 0
        current.append(piece)
        used += size + OPEN_COST_BYTES
    if current:
        out.append(FilePartition(current))
    return out


def infer_schema(
    snapshot: Snapshot, fmt: ReadFormat, store_options: dict[str, str], merge: bool, uri: str
) -> pa.Schema:
    """The Arrow schema of the read: the first file's columns (all files' columns, merged as
    Spark's Parquet source merges them, when ``merge``), every field nullable, then the
    partition columns."""
    if not snapshot.files:
        raise ObjectNotFound(
            f"no objects at {uri}, so there is no schema to infer; "
            "pass .schema(...) to read an empty prefix"
        )
    store = store_for(snapshot.namespace, store_options)
    files = snapshot.files if merge else snapshot.files[:1]
    schemas = [(f.path, fmt.schema(open_source(store, f.address, f.size))) for f in files]
    data = merge_schemas(schemas)
    return with_partitions(data, snapshot.partition_columns, snapshot.partition_types)


class GravelerReader(DataSourceReader):
    """Plans partitions on the driver and reads them on executors (no filter pushdown)."""

    def __init__(
        self,
        snapshot: Snapshot,
        schema: StructType,
        fmt: ReadFormat,
        store_options: dict[str, str],
        split_bytes: int = DEFAULT_SPLIT_BYTES,
    ) -> None:
        self.snapshot = snapshot
        self.schema = schema
        self.fmt = fmt
        self.store_options = store_options
        self.split_bytes = split_bytes
        self.strict = False  # set when the schema was inferred: convert only as Spark widens
        self.parallelism = os.cpu_count() or 2  # the data source sets Spark's when it knows
        self.prefetch = True  # decode a batch ahead in a thread (option ``prefetch``)
        self.partition_filters: list[Filter] = []
        self.data_filters: list[Filter] = []

    def partitions(self) -> Sequence[InputPartition]:
        """The files left after pruning, large Parquet files split by row groups, small ones
        packed together (:func:`pack`)."""
        pieces: list[tuple[Piece, int]] = []
        store = store_for(self.snapshot.namespace, self.store_options)
        for f in self._selected():
            if self.fmt.name == "parquet" and f.size > self.split_bytes:
                source = open_source(store, f.address, f.size)
                groups = row_group_splits(source, self.split_bytes)
                pieces.extend(((f, g), f.size // len(groups)) for g in groups)
            else:
                pieces.append(((f, None), f.size))
        return pack(pieces, self.parallelism, self.split_bytes)

    def _selected(self) -> Iterable[FileRef]:
        """The files left after partition filters (all of them without pushdown)."""
        if not self.partition_filters:
            return self.snapshot.files
        names = self.snapshot.partition_columns
        return (
            f
            for f in self.snapshot.files
            if all(
                partition_match(p, dict(zip(names, f.values, strict=True))) is True
                for p in self.partition_filters
            )
        )

    def read(self, partition: InputPartition) -> Iterator[Any]:
        """The partition's rows as Arrow batches, decoded one batch ahead in a thread (pyarrow
        decodes without the GIL) while Spark's worker sends the previous one to the JVM."""
        if not isinstance(partition, FilePartition):
            return  # Spark's placeholder partition of an empty read
        batches = self._batches(partition)
        yield from prefetched(batches) if self.prefetch else batches

    def _batches(self, partition: FilePartition) -> Iterator[Any]:
        from pyspark.sql.pandas.types import to_arrow_schema

        target = to_arrow_schema(self.schema, timezone="UTC")
        store = store_for(self.snapshot.namespace, self.store_options)
        for file, row_groups in partition.pieces:
            source = open_source(store, file.address, file.size)
            constants = self._constants(file, target)
            groups, meta = self._row_groups(source, row_groups)
            if groups == ():
                continue
            strict = file.path if self.strict else None
            parsed = self.fmt.batches(source, _without(target, constants), groups, meta)
            for batch in parsed:
                yield conform(batch, target, constants, strict)

    def _constants(self, file: FileRef, target: pa.Schema) -> dict[str, tuple[Any, Any]]:
        """The file's partition values (with their inferred types) for columns of the read."""
        snap = self.snapshot
        return {
            name: (value, kind)
            for name, value, kind in zip(
                snap.partition_columns, file.values, snap.partition_types, strict=True
            )
            if name in target.names
        }

    def _row_groups(
        self, source: Any, groups: tuple[int, ...] | None
    ) -> tuple[tuple[int, ...] | None, Any]:
        """The row groups worth reading (those whose statistics do not rule out a data
        filter), and the Parquet footer when it had to be read for that (None otherwise), so
        that reading the rows does not parse it again."""
        if not self.data_filters or self.fmt.name != "parquet":
            return groups, None
        import pyarrow.parquet as pq

        meta = pq.ParquetFile(source).metadata
        wanted = {column_of(f) for f in self.data_filters}
        index = {
            meta.schema.column(i).path: i
            for i in range(meta.num_columns)
            if meta.schema.column(i).path in wanted
        }
        candidates = range(meta.num_row_groups) if groups is None else groups
        kept = []
        for g in candidates:
            rg = meta.row_group(g)
            stats = {name: rg.column(i).statistics for name, i in index.items()}
            if all(may_match(f, stats.get(column_of(f)), rg.num_rows) for f in self.data_filters):
                kept.append(g)
        return tuple(kept), meta


class PushdownReader(GravelerReader):
    """A :class:`GravelerReader` that takes Spark's filters (needs the pushdown setting on)."""

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        """Partition filters are handled here (exactly); data filters are kept for row-group
        skipping and returned, so Spark still applies them to the rows read."""
        data_columns = [
            f.name for f in self.schema.fields if f.name not in self.snapshot.partition_columns
        ]
        partition, data, rest = split_filters(
            filters, self.snapshot.partition_columns, data_columns
        )
        self.partition_filters = partition
        self.data_filters = [f for f in data if not _nested(f)]
        return rest


def prefetched(items: Iterator[Any], depth: int = 2) -> Iterator[Any]:
    """``items``, produced by a thread up to ``depth`` ahead of the consumer. Errors are
    raised in the consumer; a consumer that stops early stops the thread."""
    import queue
    import threading

    ready: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(kind: str, value: Any) -> bool:
        while not stop.is_set():
            try:
                ready.put((kind, value), timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put("item", item):
                    return
            put("done", None)
        except BaseException as exc:  # handed to the consumer
            put("error", exc)

    thread = threading.Thread(target=produce, name="graveler-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = ready.get()
            if kind == "done":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        thread.join()


def _nested(f: Filter) -> bool:
    return len(getattr(f, "attribute", ())) != 1


def _without(schema: pa.Schema, names: dict[str, Any]) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([f for f in schema if f.name not in names])
