"""The Python half of native writes through the JVM shim (``io.graveler.spark.NativeWrite``).

With the shim loaded, ``df.write.format("graveler")`` of Parquet (the default format) is
written by Spark's own Parquet writer into the job's scratch directory of the storage
namespace (``data/<jj>/<job-id>/``) and then staged here, on the driver, by the code
:func:`graveler_spark.native.write_native` uses (:func:`~graveler_spark.native.stage_directory`:
verify, link, stage with table markers; commit if asked). The shim calls this module twice
per write, each time through ``inferSchema`` of the Python source with the internal option
:data:`WRITE_OPTION`; the answer is JSON in the metadata of the returned schema's only field,
:data:`WRITE_FIELD`:

``begin``
    Checks the write exactly as the Python writer does (``GravelerDataSource._write_job``:
    target branch writable, overwrite with a prefix, options valid against the DataFrame's
    schema, sent as JSON in :data:`SCHEMA_OPTION`), then answers ``{"native": false}`` when
    Spark cannot write there (not Parquet; a namespace that is not local), else the job ID,
    the scratch directory as a ``file://`` URI, and the Spark writer options
    (``compression``, ``maxRecordsPerFile``) and partition columns to use.
``finish``
    After Spark's write into that directory (job ID in :data:`JOB_OPTION`, Spark's own count
    of written files in :data:`FILES_OPTION`, ``-1`` when unknown): checks the target again,
    stages every file under the target prefix with the data source's names
    (``part-<task>-<job-id>-c<seq>.parquet``), table markers and ``object_metadata``, and
    commits when ``commit_message`` is given. On failure the scratch directory is removed
    and nothing is staged.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from graveler import shared_client
from graveler.errors import InvalidArgument
from graveler_spark.commit import commit_if_asked
from graveler_spark.job import PARQUET_CONTENT_TYPE, WriteJob
from graveler_spark.native import (
    produced_files,
    scratch_directory,
    spark_path,
    stage_directory,
)
from graveler_spark.options import flag, integer
from graveler_spark.storage import store_for

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from pyspark.sql.types import DataType, StructType

#: Internal option set by the shim: ``begin`` or ``finish``.
WRITE_OPTION = "__write"
#: The DataFrame's schema (Spark's JSON) for ``begin`` and ``finish``.
SCHEMA_OPTION = "__write_schema"
#: ``true`` for an overwrite (Spark truncates the table).
OVERWRITE_OPTION = "__write_overwrite"
#: The job ID ``begin`` answered, for ``finish``.
JOB_OPTION = "__write_job"
#: Spark's count of data files written, for ``finish`` (``-1``: unknown).
FILES_OPTION = "__write_files"
#: Set by the shim: the session's ``spark.sql.parquet.outputTimestampType``.
TIMESTAMPS_OPTION = "__parquet_timestamps"
#: The field whose metadata carries the answer.
WRITE_FIELD = "__graveler_write"
#: Spark's Parquet file names: ``part-<task>-<uuid>.c<seq>[.<codec>].parquet`` (Spark 4.3;
#: earlier releases put ``-`` before ``c<seq>``).
_SPARK_NAME = re.compile(r"^part-(\d+)-[0-9a-fA-F-]+[.-]c(\d+)(?:\.[A-Za-z0-9_]+)?\.parquet$")
_JOB_ID = re.compile(r"^[0-9a-f]{32}$")


def answer(options: Mapping[str, str], make_job: Callable[..., WriteJob]) -> StructType:
    """The shim's request in ``options`` answered as a one-field schema (module docstring).
    ``make_job(schema, overwrite, job_id)`` is the data source's checked write job."""
    from pyspark.sql.types import StructType

    op = options.get(WRITE_OPTION)
    schema = StructType.fromJson(json.loads(options.get(SCHEMA_OPTION) or "{}"))
    overwrite = flag(options, OVERWRITE_OPTION, False)
    if op == "begin":
        doc = begin(make_job(schema, overwrite, None))
        if doc["native"] and not _same_timestamps(schema, options.get(TIMESTAMPS_OPTION)):
            doc = {"native": False}
    elif op == "finish":
        job_id = options.get(JOB_OPTION) or ""
        if not _JOB_ID.match(job_id):
            raise InvalidArgument(f"shim write: bad job ID {job_id!r}")
        job = make_job(schema, overwrite, job_id)
        doc = finish(job, integer(options, FILES_OPTION, -1, minimum=-1))
    else:
        raise InvalidArgument(f"unknown shim write request {op!r}")
    return _carrier(doc)


def begin(job: WriteJob) -> dict[str, Any]:
    """What the shim needs to run Spark's writer for ``job``, or ``{"native": False}``."""
    store = store_for(job.namespace, job.settings.store_options)
    directory = store.local_path(job.scratch_prefix.rstrip("/"))
    if job.format != "parquet" or directory is None:
        return {"native": False}
    spark_options = {"compression": job.compression}
    if job.max_records_per_file:
        spark_options["maxRecordsPerFile"] = str(job.max_records_per_file)
    return {
        "native": True,
        "job": job.job_id,
        "directory": spark_path(directory),
        "options": spark_options,
        "partitionBy": list(job.partition_by),
    }


def finish(job: WriteJob, files: int) -> dict[str, Any]:
    """Stage what Spark wrote for ``job`` (see the module docstring); commit if asked. A
    write of no rows stages no file, as the Python writer's (Spark writes one empty file to
    keep the schema): an overwrite still replaces the table."""
    repo = shared_client(job.settings).repository(job.target.repository)
    if _no_rows(scratch_directory(repo, job.target, job.job_id)):
        files = 0
    entries = stage_directory(
        repo,
        job.target,
        job.table_write(),
        None if files < 0 else files,
        rename=data_source_name(job.job_id),
        content_type=PARQUET_CONTENT_TYPE,
    )
    commit_if_asked(repo, job.target.ref, job.commit_message, job.commit_metadata)
    return {"staged": len(entries)}


def _same_timestamps(schema: StructType, output_type: str | None) -> bool:
    """Whether Spark's writer stores ``schema``'s timestamps as the Python writer does
    (INT64 microseconds). Not when the session writes INT96 (Spark's default) and a column
    holds a ``timestamp``: graveler's reads would then see ``timestamp_ntz``."""
    if (output_type or "INT96").strip().upper() != "INT96":
        return True
    return not _has_timestamp(schema)


def _has_timestamp(kind: DataType) -> bool:
    from pyspark.sql.types import ArrayType, MapType, StructType, TimestampType

    if isinstance(kind, TimestampType):
        return True
    if isinstance(kind, StructType):
        return any(_has_timestamp(f.dataType) for f in kind.fields)
    if isinstance(kind, ArrayType):
        return _has_timestamp(kind.elementType)
    if isinstance(kind, MapType):
        return _has_timestamp(kind.keyType) or _has_timestamp(kind.valueType)
    return False


def _no_rows(directory: str) -> bool:
    """Whether the Parquet files Spark wrote into ``directory`` hold no row at all; if so
    they are deleted (a write of no rows stages nothing, as the Python writer's)."""
    import pyarrow.parquet as pq

    paths = [os.path.join(directory, rel) for rel in produced_files(directory)]
    if not paths or any(pq.read_metadata(p).num_rows for p in paths):
        return False
    for path in paths:
        os.unlink(path)
    return True


def data_source_name(job_id: str) -> Callable[[str], str]:
    """Maps Spark's relative file path (``day=1/part-00003-<uuid>.c000.snappy.parquet``) to
    the name the Python writer gives the same task's file (``day=1/part-00003-<job-id>-c000
    .parquet``); names of another shape are kept."""

    def rename(relative: str) -> str:
        head, _, name = relative.rpartition("/")
        found = _SPARK_NAME.match(name)
        if found is None:
            return relative
        task, seq = int(found.group(1)), int(found.group(2))
        renamed = f"part-{task:05d}-{job_id}-c{seq:03d}.parquet"
        return f"{head}/{renamed}" if head else renamed

    return rename


def _carrier(doc: dict[str, Any]) -> StructType:
    from pyspark.sql.types import StringType, StructField, StructType

    text = json.dumps(doc, separators=(",", ":"))
    return StructType([StructField(WRITE_FIELD, StringType(), True, {WRITE_FIELD: text})])
