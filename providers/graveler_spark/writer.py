"""Writing a DataFrame into a branch: executors write Parquet, the driver stages it all at once.

Every task writes its rows as Parquet files (pyarrow) straight into the repository's storage
namespace, under a prefix owned by the job: ``data/<jj>/<job-id>/``. It returns the files'
physical addresses, sizes and SHA-256 checksums in a :class:`WrittenFiles` message. A task
that fails deletes what it wrote before failing. The driver's :meth:`GravelerWriter.commit`
then stages every file in one SQL transaction (see :mod:`graveler_spark.commit`), and
:meth:`GravelerWriter.abort` deletes every file of the job and stages nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from graveler_spark.commit import abort_job, commit_job
from graveler_spark.job import WriteJob, WrittenFile
from graveler_spark.storage import require_shared, store_for

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graveler.objectstore import ObjectStore


@dataclass
class WrittenFiles(WriterCommitMessage):
    """What one task wrote."""

    files: tuple[WrittenFile, ...]


class GravelerWriter(DataSourceArrowWriter):
    """``write`` runs in executors; ``commit`` and ``abort`` run once on the driver."""

    def __init__(self, job: WriteJob) -> None:
        self.job = job

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WrittenFiles:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        partition, attempt = (ctx.partitionId(), ctx.attemptNumber()) if ctx else (0, 0)
        sink = ParquetSink(self.job, partition, attempt)
        require_shared(sink.store, self.job.scratch_prefix)  # before any work
        try:
            for batch in iterator:
                sink.write(batch)
            return WrittenFiles(sink.close())
        except BaseException:
            sink.discard()
            raise

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        commit_job(self.job, _files(messages))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        abort_job(self.job, _files(messages))


def _files(messages: list[WriterCommitMessage | None]) -> list[WrittenFile]:
    return [f for m in messages if isinstance(m, WrittenFiles) for f in m.files]


class ParquetSink:
    """The files one task writes; rolls to a new file every ``max_records_per_file`` rows."""

    def __init__(self, job: WriteJob, partition: int, attempt: int) -> None:
        self.job = job
        self.partition = partition
        self.attempt = attempt
        self.store: ObjectStore = store_for(job.namespace, job.settings.store_options)
        self.done: list[WrittenFile] = []
        self._open: _OpenFile | None = None
        self._dictionary: list[str] | None = None  # chosen on the task's first batch

    def write(self, batch: pa.RecordBatch) -> None:
        limit = self.job.max_records_per_file
        while batch.num_rows:
            current = self._open or self._start(batch)
            room = limit - current.rows if limit else batch.num_rows
            head = batch if room >= batch.num_rows else batch.slice(0, room)
            current.writer.write_batch(head)
            current.rows += head.num_rows
            batch = batch.slice(head.num_rows)
            if limit and current.rows >= limit:
                self._finish()

    def close(self) -> tuple[WrittenFile, ...]:
        if self._open is not None:
            self._finish()
        return tuple(self.done)

    def discard(self) -> None:
        """Delete everything this task wrote (called when the task fails)."""
        if self._open is not None:
            with contextlib.suppress(Exception):
                self._open.writer.close()
            _remove(self._open.local)  # the file itself, or the local copy before upload
        for f in self.done:
            self.store.delete(f.address)

    def _start(self, first: pa.RecordBatch) -> _OpenFile:
        import pyarrow.parquet as pq

        seq = len(self.done)
        name = f"part-{self.partition:05d}-{self.job.job_id}-c{seq:03d}.parquet"
        unique = uuid.uuid4().hex[:12]
        address = (
            f"{self.job.scratch_prefix}part-{self.partition:05d}-a{self.attempt}-c{seq:03d}"
            f"-{unique}.parquet"
        )
        local = self.store.local_path(address)
        if local is None:
            fd, local = tempfile.mkstemp(prefix="graveler-spark-", suffix=".parquet")
            os.close(fd)
        else:
            os.makedirs(os.path.dirname(local), exist_ok=True)
        writer = pq.ParquetWriter(
            local,
            first.schema,
            compression=self.job.compression,
            use_dictionary=self._dictionary_columns(first),
        )
        self._open = _OpenFile(self.job.target.key(name), address, local, writer)
        return self._open

    def _dictionary_columns(self, first: pa.RecordBatch) -> list[str]:
        """The same choice for every file of the task (judged once, on its first batch)."""
        if self._dictionary is None:
            self._dictionary = dictionary_columns(first)
        return self._dictionary

    def _finish(self) -> None:
        current = self._open
        assert current is not None
        self._open = None
        try:
            current.writer.close()
            checksum, size = _sha256(current.local)
            mtime = self._publish(current)
        except BaseException:
            _remove(current.local)
            raise
        self.done.append(WrittenFile(current.path, current.address, size, checksum, mtime))

    def _publish(self, current: _OpenFile) -> datetime:
        """Upload the finished file unless it was written in place; returns its mtime."""
        if self.store.local_path(current.address) == current.local:
            return datetime.fromtimestamp(os.stat(current.local).st_mtime, UTC)
        with open(current.local, "rb") as fh:
            info = self.store.put(current.address, fh)
        _remove(current.local)
        return info.mtime


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
    local: str
    writer: pq.ParquetWriter
    rows: int = 0


def _sha256(path: str) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
