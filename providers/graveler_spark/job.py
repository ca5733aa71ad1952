"""A Spark write job as the driver plans it and the executors carry it out (picklable data).

A job owns one key prefix in the namespace, ``data/<jj>/<job-id>/``: every physical file its
tasks write lives under it, so aborting the job means deleting that prefix.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from graveler import DATA_PREFIX, ClientSettings
from graveler_spark.options import Target
from graveler_spark.tables import TableWrite

PARQUET_CONTENT_TYPE = "application/vnd.apache.parquet"
CONTENT_TYPES = {"parquet": PARQUET_CONTENT_TYPE, "csv": "text/csv", "json": "application/x-ndjson"}


@dataclass(frozen=True)
class WriteJob:
    """Everything executors and the driver's commit need; picklable."""

    job_id: str
    settings: ClientSettings
    target: Target  # target.ref is the branch
    namespace: str
    overwrite: bool = False
    compression: str = "snappy"
    max_records_per_file: int = 0  # 0: one file per task
    commit_message: str | None = None
    commit_metadata: Mapping[str, str] = field(default_factory=dict)
    object_metadata: Mapping[str, str] = field(default_factory=dict)  # on every file written
    partition_by: tuple[str, ...] = ()  # Hive-style partition columns, in directory order
    dynamic: bool = False  # partitionOverwriteMode=dynamic: replace only partitions written
    format: str = "parquet"  # parquet | csv | json (JSON lines)
    header: bool = True  # CSV: write a header line
    delimiter: str = ","  # CSV

    def table_write(self) -> TableWrite:
        """How the driver stages this job's files (see :mod:`graveler_spark.tables`)."""
        return TableWrite(
            branch=self.target.ref,
            prefix=self.target.path,
            job_id=self.job_id,
            overwrite=self.overwrite,
            dynamic=self.dynamic,
            partitioned=bool(self.partition_by),
            metadata=dict(self.object_metadata),
        )

    @property
    def scratch_prefix(self) -> str:
        """Every physical file of this job lives under this key prefix."""
        return scratch_prefix(self.job_id)


@dataclass(frozen=True)
class WrittenFile:
    path: str  # object path in the branch
    address: str  # physical address relative to the namespace
    size: int
    checksum: str  # hex SHA-256
    mtime: datetime
    content_type: str = PARQUET_CONTENT_TYPE


def new_job_id() -> str:
    return uuid.uuid4().hex


def scratch_prefix(job_id: str) -> str:
    """The key prefix (ending in ``/``) owned by one job, inside the namespace's ``data/``."""
    return f"{DATA_PREFIX}{job_id[:2]}/{job_id}/"
