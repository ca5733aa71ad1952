"""Writing a DataFrame into a branch: executors write files, the driver stages it all at once.

Every task writes its rows as Parquet, CSV or JSON-lines files (pyarrow) straight into the
repository's storage namespace, under a prefix owned by the job: ``data/<jj>/<job-id>/``. A
partitioned write (``partitionBy``) splits each task's rows by partition values: one file per
task and partition, logically at ``<table>/<k=v>/part-...`` (the physical address stays flat),
without the partition columns, as Spark writes them. pyarrow writes into the object store's
push-style writer (``ObjectStore.open_writer``), which hashes the bytes on the way and makes
each file durable when it is committed: in place on a local namespace, multipart on S3, no
temporary copy and no second pass either way. A task returns its files' paths,
physical addresses, sizes and SHA-256 checksums in a :class:`WrittenFiles` message; a task
that fails deletes what it wrote before failing. The driver's :meth:`GravelerWriter.commit`
then stages every file in one SQL transaction (see :mod:`graveler_spark.commit`), and
:meth:`GravelerWriter.abort` deletes every file of the job and stages nothing.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from graveler_spark.commit import abort_job, commit_job
from graveler_spark.job import CONTENT_TYPES, WriteJob, WrittenFile
from graveler_spark.partitions import partition_dir
from graveler_spark.sinks import FileSink, open_sink
from graveler_spark.storage import require_shared, store_for

if TYPE_CHECKING:
    import pyarrow as pa

    from graveler.objectstore import ObjectStore, ObjectWriter

#: Rows buffered per file before they are written as one Parquet row group.
ROW_GROUP_ROWS = 131_072


@dataclass
class WrittenFiles(WriterCommitMessage):
    """What one task wrote."""

    files: tuple[WrittenFile, ...]


class GravelerWriter(DataSourceArrowWriter):
    """``write`` runs in executors; ``commit`` and ``abort`` run once on the driver."""

    def __init__(self, job: WriteJob, announced: str | None = None) -> None:
        self.job = job
        #: The prefix under which the driver put its marker (default: the job's own).
        self.announced = announced or job.scratch_prefix

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WrittenFiles:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        partition, attempt = (ctx.partitionId(), ctx.attemptNumber()) if ctx else (0, 0)
        task = TaskFiles(self.job, partition, attempt)
        require_shared(task.store, self.announced)  # before any work
        try:
            for batch in iterator:
                task.write(batch)
            return WrittenFiles(task.close())
        except BaseException:
            task.discard()
            raise

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        commit_job(self.job, files_of(messages))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        abort_job(self.job, files_of(messages))


def files_of(messages: list[WriterCommitMessage | None]) -> list[WrittenFile]:
    """Every file the tasks' messages report."""
    return [f for m in messages if isinstance(m, WrittenFiles) for f in m.files]


class TaskFiles:
    """Everything one task writes: rows routed to a :class:`DirFiles` per partition directory
    (``date=2024-01-01/``; the table directory itself when the write is not partitioned)."""

    def __init__(self, job: WriteJob, partition: int, attempt: int) -> None:
        self.job = job
        self.partition = partition
        self.attempt = attempt
        self.store: ObjectStore = store_for(job.namespace, job.settings.store_options)
        self.dirs: dict[str, DirFiles] = {}
        self.dictionary: list[str] | None = None  # chosen on the task's first batch

    def write(self, batch: pa.RecordBatch) -> None:
        if self.dictionary is None:  # Parquet's choice, made once per task
            self.dictionary = dictionary_columns(batch) if self.job.format == "parquet" else []
        if not self.job.partition_by:
            self._dir("").write(batch)
            return
        for directory, part in split_by_partition(batch, self.job.partition_by):
            self._dir(directory).write(part)

    def _dir(self, directory: str) -> DirFiles:
        found = self.dirs.get(directory)
        if found is None:
            found = self.dirs[directory] = DirFiles(self, directory)
        return found

    def close(self) -> tuple[WrittenFile, ...]:
        return tuple(f for d in self.dirs.values() for f in d.close())

    def discard(self) -> None:
        """Delete everything this task wrote (called when the task fails)."""
        for d in self.dirs.values():
            d.discard()


class DirFiles:
    """The files a task writes in one directory; rolls to a new file every
    ``max_records_per_file`` rows and buffers rows into row groups of ``ROW_GROUP_ROWS``."""

    def __init__(self, task: TaskFiles, directory: str) -> None:
        self.task = task
        self.job = task.job
        self.directory = directory
        self.done: list[WrittenFile] = []
        self._open: _OpenFile | None = None

    def write(self, batch: pa.RecordBatch) -> None:
        limit = self.job.max_records_per_file
        while batch.num_rows:
            current = self._open or self._start(batch.schema)
            room = limit - current.rows if limit else batch.num_rows
            head = batch if room >= batch.num_rows else batch.slice(0, room)
            current.add(head)
            batch = batch.slice(head.num_rows)
            if limit and current.rows >= limit:
                self._finish()

    def close(self) -> list[WrittenFile]:
        if self._open is not None:
            self._finish()
        return self.done

    def discard(self) -> None:
        if self._open is not None:
            with contextlib.suppress(Exception):
                self._open.sink.close()
            self._open.target.abort()
        for f in self.done:
            self.task.store.delete(f.address)

    def _start(self, schema: pa.Schema) -> _OpenFile:
        job, task = self.job, self.task
        seq = len(self.done)
        ext = job.format  # the file extension is the format's name
        name = f"part-{task.partition:05d}-{job.job_id}-c{seq:03d}.{ext}"
        if self.directory:
            name = f"{self.directory}/{name}"
        address = (
            f"{job.scratch_prefix}part-{task.partition:05d}-a{task.attempt}-c{seq:03d}"
            f"-{uuid.uuid4().hex[:12]}.{ext}"
        )
        target = task.store.open_writer(address, fresh=True)
        try:
            sink = open_sink(job, target, schema, task.dictionary or [])
        except BaseException:
            target.abort()
            raise
        self._open = _OpenFile(job.target.key(name), address, target, sink)
        return self._open

    def _finish(self) -> None:
        current = self._open
        assert current is not None
        self._open = None
        try:
            current.flush()
            current.sink.close()
            info = current.target.commit()
        except BaseException:
            current.target.abort()
            raise
        content_type = CONTENT_TYPES[self.job.format]
        checksum = current.target.sha256()
        written = WrittenFile(
            current.path, current.address, info.size, checksum, info.mtime, content_type
        )
        self.done.append(written)


def split_by_partition(
    batch: pa.RecordBatch, columns: Sequence[str]
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """``(directory, rows)`` for each combination of partition values in ``batch``; the rows
    lose the partition columns, which live in the directory name (as Spark writes them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.Table.from_batches([batch])
    keys = table.select(list(columns))
    order = pc.sort_indices(keys, sort_keys=[(c, "ascending", "at_end") for c in columns])
    table = table.take(order)
    groups = table.select(list(columns)).group_by(list(columns), use_threads=False)
    counts = groups.aggregate([([], "count_all")])
    data = table.drop_columns(list(columns))
    offset = 0
    for i in range(counts.num_rows):
        values = [counts.column(c)[i].as_py() for c in columns]
        rows = counts.column("count_all")[i].as_py()
        for part in data.slice(offset, rows).to_batches():
            yield partition_dir(columns, values), part
        offset += rows


def dictionary_columns(batch: pa.RecordBatch) -> list[str]:
    """Columns worth dictionary encoding, judged on a task's first batch: those with at most
    half as many distinct values as rows. (pyarrow's default -- try a dictionary everywhere,
    fall back when it overflows -- costs twice the encoding time on unique columns and
    writes larger files.)"""
    import pyarrow.compute as pc

    chosen: list[str] = []
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        try:
            distinct = pc.count_distinct(column).as_py()
        except Exception:  # types count_distinct does not support (nested): leave as default
            chosen.append(name)
            continue
        if distinct * 2 <= max(len(column), 1):
            chosen.append(name)
    return chosen


@dataclass
class _OpenFile:
    path: str
    address: str
    target: ObjectWriter  # the object being written: the sink writes into it
    sink: FileSink
    rows: int = 0
    pending: list[pa.RecordBatch] = field(default_factory=list)
    pending_rows: int = 0

    def add(self, batch: pa.RecordBatch) -> None:
        """Buffer ``batch``; write a row group once ``ROW_GROUP_ROWS`` rows are waiting."""
        self.pending.append(batch)
        self.pending_rows += batch.num_rows
        self.rows += batch.num_rows
        if self.pending_rows >= ROW_GROUP_ROWS:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if not self.pending:
            return
        if len(self.pending) == 1:
            self.sink.write(self.pending[0])
        else:
            table = pa.Table.from_batches(self.pending).combine_chunks()
            for batch in table.to_batches(max_chunksize=max(table.num_rows, 1)):
                self.sink.write(batch)
        self.pending, self.pending_rows = [], 0
