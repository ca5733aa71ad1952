"""Streaming writes: ``df.writeStream.format("graveler")``, one commit per micro-batch.

    (events.writeStream.format("graveler")
        .option("checkpointLocation", "/checkpoints/events")
        .start("graveler://lake/ingest/tables/events"))

Each micro-batch's tasks write files as a batch write does (any format, ``partitionBy``);
the driver's ``commit(messages, batch_id)`` stages them and commits the branch in one go, with
the stream's identity and the batch ID in the commit metadata (``graveler.spark.stream``,
``graveler.spark.batch``).

Exactly once on restart: Spark re-runs a micro-batch whose commit it had not recorded in the
checkpoint when the query stopped. Before committing, the driver looks for a commit of this
stream and batch among the branch's recent commits (``LOOKBACK``); when it finds one, the batch
landed already: the re-run's files are deleted and nothing is staged. Files a crashed attempt
of the same batch left staged but uncommitted (their user metadata names the stream and batch)
are removed in the same staging transaction. The stream's identity is the option ``stream_id``,
else the ``checkpointLocation`` (the same for every restart of one query), else the target URI.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage

from graveler import shared_client
from graveler_spark.commit import _entry, delete_job_files, delete_strays, verify_written
from graveler_spark.job import WriteJob, WrittenFile, new_job_id
from graveler_spark.storage import STREAM_MARKER_PREFIX, store_for
from graveler_spark.tables import dir_prefix, stage_table_write
from graveler_spark.writer import GravelerWriter, WrittenFiles, files_of

if TYPE_CHECKING:
    import pyarrow as pa

    from graveler import Repository

STREAM_KEY = "graveler.spark.stream"
BATCH_KEY = "graveler.spark.batch"
STAGED_KEY = "graveler-spark-stream-batch"  # user metadata of files staged by a batch
LOOKBACK = 200  # commits searched for a batch that already landed


class GravelerStreamWriter(DataSourceStreamArrowWriter):
    """``write`` runs in executors (a fresh job ID per task, so batches never share file
    names); ``commit`` and ``abort`` run on the driver once per micro-batch."""

    def __init__(self, job: WriteJob, stream_id: str) -> None:
        self.job = job
        self.stream_id = stream_id

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WrittenFiles:
        task_job = dataclasses.replace(self.job, job_id=new_job_id())
        return GravelerWriter(task_job, announced=STREAM_MARKER_PREFIX).write(iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        files = files_of(messages)
        by_task = _by_prefix(files)
        store = store_for(self.job.namespace, self.job.settings.store_options)
        gv = shared_client(self.job.settings)  # one per process and settings
        repo = gv.repository(self.job.target.repository)
        if self._landed(repo, batchId):
            self._delete(by_task)
            return
        try:
            seen = [verify_written(store, p, fs) for p, fs in by_task.items()]
            self._stage(repo, files, batchId)
        except BaseException:
            self._delete(by_task)
            raise
        for keys, task_files in zip(seen, by_task.values(), strict=True):
            delete_strays(store, keys, task_files)
        self._commit(repo, batchId)  # a failure leaves the files staged (user data)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._delete(_by_prefix(files_of(messages)))

    def _landed(self, repo: Repository, batch_id: int) -> bool:
        """Whether this batch's commit is among the branch's recent first-parent commits."""
        wanted = {STREAM_KEY: self.stream_id, BATCH_KEY: str(batch_id)}
        return any(
            all(c.metadata.get(k) == v for k, v in wanted.items())
            for c in repo.log(self.job.target.ref, LOOKBACK, first_parent=True)
        )

    def _stage(self, repo: Repository, files: list[WrittenFile], batch_id: int) -> None:
        job, tag = self.job, f"{self.stream_id}#{batch_id}"
        metadata = {**job.object_metadata, STAGED_KEY: tag}
        entries = [_entry(f, metadata) for f in files]
        leftovers = [  # staged by a crashed attempt of this batch: only staging can hold them
            e.path
            for e in repo.iter_staged(job.target.ref, dir_prefix(job.target.path))
            if e.metadata.get(STAGED_KEY) == tag
        ]
        write = dataclasses.replace(job.table_write(), job_id=f"{job.job_id}-{batch_id}")
        stage_table_write(repo, write, entries, also_delete=leftovers)

    def _commit(self, repo: Repository, batch_id: int) -> None:
        job = self.job
        message = job.commit_message or f"stream {self.stream_id}: batch {batch_id}"
        meta = {**job.commit_metadata, STREAM_KEY: self.stream_id, BATCH_KEY: str(batch_id)}
        repo.commit(job.target.ref, message, metadata=meta, allow_empty=True)

    def _delete(self, by_task: dict[str, list[WrittenFile]]) -> None:
        store = store_for(self.job.namespace, self.job.settings.store_options)
        for prefix, files in by_task.items():
            delete_job_files(store, prefix, files)


def _by_prefix(files: list[WrittenFile]) -> dict[str, list[WrittenFile]]:
    """Files by the scratch prefix of the task that wrote them (each task writes under a job
    ID of its own)."""
    found: dict[str, list[WrittenFile]] = {}
    for f in files:
        found.setdefault(f.address.rsplit("/", 1)[0] + "/", []).append(f)
    return found
