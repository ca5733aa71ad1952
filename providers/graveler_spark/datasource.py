"""The ``graveler`` Python Data Source (PySpark 4.x ``pyspark.sql.datasource``).

    spark.read.format("graveler").load("graveler://lake/main/tables/events")
    df.write.format("graveler").mode("append").save("graveler://lake/etl-42/tables/events")

Read options: ``format`` (parquet | csv | json), ``mergeSchema``, ``basePath``,
``split_bytes``, ``batch_rows``, ``header`` / ``delimiter`` (CSV), ``nativeReads`` (with the
JVM shim loaded, Parquet reads with an inferred schema are planned here and read by Spark's own
Parquet scan: :mod:`graveler_spark.plan`; ``false`` keeps this module's reader).

Write options: ``format`` (parquet | csv | json), ``partitionBy`` (comma-separated columns;
what ``.partitionBy()`` sets when the JVM shim is loaded), ``partitionOverwriteMode`` (static |
dynamic), ``commit_message``, ``commit_metadata`` (a JSON object of strings),
``object_metadata`` (a JSON object of strings set as user metadata on every object written),
``compression`` (Parquet codec, default snappy), ``max_records_per_file``, ``header`` /
``delimiter`` (CSV).
Connection options (``database_url``, ``home``, ``store.*``) are described in
:mod:`graveler_spark.options`.

Filter pushdown: Spark (4.1+) sends filters to a Python data source only when
``spark.sql.python.filterPushdown.enabled`` is true, and fails every read of a source whose
reader implements ``pushFilters`` while it is false. So the reader takes filters only when the
setting is known to be on: :func:`graveler_spark.register` turns the setting on and binds
``pushdown = True`` on the class it registers (registrations are per session); otherwise the
JVM shim, when loaded, passes the session's value as the option ``__pushdown``. The option
``filterPushdown`` overrides both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)

from graveler import ClientSettings, shared_client
from graveler.errors import BranchNotFound, InvalidArgument
from graveler_spark.formats import ReadFormat
from graveler_spark.job import WriteJob, new_job_id
from graveler_spark.options import FORMAT_NAME, Target, flag, integer, parse_target
from graveler_spark.plan import (
    PLAN_OPTION,
    SCHEMES_OPTION,
    encode_plan,
    spark_readable,
    with_plan,
)
from graveler_spark.reader import (
    DEFAULT_SPLIT_BYTES,
    GravelerReader,
    PushdownReader,
    infer_schema,
)
from graveler_spark.settings import resolve
from graveler_spark.shim_writes import WRITE_OPTION, answer
from graveler_spark.snapshot import Snapshot, take_snapshot
from graveler_spark.storage import STREAM_MARKER_PREFIX, announce, store_for
from graveler_spark.write_options import write_options
from graveler_spark.writer import GravelerWriter

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

    from graveler import Branch, Repository


class GravelerDataSource(DataSource):
    """Reads refs and writes branches of graveler repositories.

    ``defaults`` holds connection settings bound by :func:`graveler_spark.register`; options
    given to a read or write win over them."""

    defaults: ClassVar[ClientSettings] = ClientSettings()
    pushdown: ClassVar[bool] = False  # register() binds True after turning Spark's setting on
    _pinned: Snapshot | None = None  # set by the first schema() / reader() call
    _inferred = False  # schema() ran: the read's schema came from the files

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    # --- reading --------------------------------------------------------------------------------

    def schema(self) -> StructType:
        """Inferred from the first object's Parquet footer (or CSV / JSON contents), all
        fields nullable, then the partition columns discovered from the keys. When the JVM
        shim asks (option ``__plan``), a first field carries the native read plan
        (:mod:`graveler_spark.plan`)."""
        from pyspark.sql.pandas.types import from_arrow_schema

        if WRITE_OPTION in self.options:  # the shim's native write (graveler_spark.shim_writes)
            return answer(self.options, self._write_job)
        snapshot = self._snapshot()
        target = self._target()
        merge = flag(self.options, "mergeSchema", False)
        arrow = infer_schema(snapshot, self._format(), self._store_options(), merge, target.uri)
        self._inferred = True
        inferred = from_arrow_schema(arrow, prefer_timestamp_ntz=True)
        if PLAN_OPTION not in self.options:
            return inferred
        return with_plan(inferred, self._plan(snapshot, arrow))

    def _plan(self, snapshot: Snapshot, arrow: pa.Schema) -> dict[str, Any]:
        """The native read plan the JVM shim asked for (:mod:`graveler_spark.plan`)."""
        schemes = [s.strip() for s in (self.options.get(SCHEMES_OPTION) or "").split(",")]
        if self._format().name != "parquet" or not spark_readable(arrow):
            return {"native": False}
        if ClientSettings.from_mapping(self.options).store_options:
            # Spark's own reader opens s3a:// files with the session's Hadoop settings only:
            # S3 settings given with this read (store.* options) reach the Python reader.
            schemes = [s for s in schemes if s != "s3"]
        return encode_plan(snapshot, self._target(), [s for s in schemes if s])

    def reader(self, schema: StructType) -> DataSourceReader:
        split = integer(self.options, "split_bytes", DEFAULT_SPLIT_BYTES, minimum=1)
        kind = PushdownReader if self._pushdown() else GravelerReader
        reader = kind(self._snapshot(), schema, self._format(), self._store_options(), split)
        reader.strict = self._inferred
        reader.prefetch = flag(self.options, "prefetch", True)
        parallelism = self.options.get("parallelism") or self.options.get("__parallelism")
        if parallelism:
            reader.parallelism = integer({"parallelism": parallelism}, "parallelism", 1, 1)
        return reader

    def _pushdown(self) -> bool:
        """Whether Spark will call ``pushFilters`` (see the module docstring)."""
        if "filterPushdown" in self.options:
            return flag(self.options, "filterPushdown", False)
        if type(self).pushdown:  # register() turned the setting on for this session
            return True
        return flag(self.options, "__pushdown", False)

    def _snapshot(self) -> Snapshot:
        """Resolved once per DataFrame: ``schema()`` and ``reader()`` see the same objects."""
        if self._pinned is None:
            infer = flag(self.options, "partitionColumnTypeInference", True)
            base = self.options.get("basePath") or None
            self._pinned = take_snapshot(self._settings(), self._target(), base, infer)
        return self._pinned

    def _format(self) -> ReadFormat:
        return ReadFormat.from_options(self.options)

    # --- writing --------------------------------------------------------------------------------

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        """Checks the target branch and the options before any executor writes a byte, and
        leaves the driver's marker under the job's prefix (``graveler_spark.storage``)."""
        job = self._write_job(schema, overwrite)
        announce(store_for(job.namespace, job.settings.store_options), job.scratch_prefix)
        return GravelerWriter(job)

    def _write_job(
        self, schema: StructType, overwrite: bool, job_id: str | None = None
    ) -> WriteJob:
        """The checked job of a write (raises before anything is written); a new job ID
        unless ``job_id`` is given."""
        target = self._target()
        if overwrite and not target.path:
            raise InvalidArgument(
                f"overwrite needs a path prefix to replace ({target.uri} names a whole branch)"
            )
        job_options = write_options(self.options, schema)
        settings = self._settings()
        gv = shared_client(settings)  # one per process and settings
        repo = gv.repository(target.repository)
        _writable(repo, target)
        namespace = repo.info.storage_namespace
        job_options["job_id"] = job_id or new_job_id()
        return self._job(settings, target, namespace, overwrite, job_options)

    def _job(
        self,
        settings: ClientSettings,
        target: Target,
        namespace: str,
        overwrite: bool,
        extra: dict[str, Any],
    ) -> WriteJob:
        return WriteJob(
            settings=settings,
            target=target,
            namespace=namespace,
            overwrite=overwrite,
            compression=self.options.get("compression") or "snappy",
            max_records_per_file=integer(self.options, "max_records_per_file", 0),
            commit_message=self.options.get("commit_message") or None,
            commit_metadata=_metadata(self.options, "commit_metadata"),
            object_metadata=_metadata(self.options, "object_metadata"),
            **extra,
        )

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        """``writeStream.format("graveler")``: one commit per micro-batch, exactly once on
        restart from a checkpoint (see :mod:`graveler_spark.streaming`)."""
        from graveler_spark.streaming import GravelerStreamWriter

        job = self._write_job(schema, overwrite)
        # One marker per namespace for every stream (a stream has no end hook to remove a
        # marker of its own); each batch's files are still checked at commit time.
        announce(store_for(job.namespace, job.settings.store_options), STREAM_MARKER_PREFIX)
        stream_id = (
            self.options.get("stream_id")
            or self.options.get("checkpointLocation")
            or self._target().uri
        )
        return GravelerStreamWriter(job, stream_id)

    # --- shared ---------------------------------------------------------------------------------

    def _target(self) -> Target:
        return parse_target(self.options)

    def _settings(self) -> ClientSettings:
        # options over register()'s defaults over the driver's environment (settings.py)
        return resolve(self.options, type(self).defaults)

    def _store_options(self) -> dict[str, str]:
        return dict(self._settings().store_options)


def _writable(repo: Repository, target: Target) -> Branch:
    try:
        return repo.writable_branch(target.ref)
    except BranchNotFound as exc:
        raise BranchNotFound(
            f"cannot write to {target.uri}: {target.ref!r} is not a branch of "
            f"{target.repository!r}; Spark writes go to a branch (create one first)"
        ) from exc


def _metadata(options: Mapping[str, str], name: str) -> dict[str, str]:
    """Option ``name`` parsed as a JSON object of strings (empty when not given)."""
    raw = options.get(name)
    if not raw:
        return {}
    try:
        doc = json.loads(raw)
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in doc.items()
    ):
        raise InvalidArgument(f"option {name!r} must be a JSON object of strings, got {raw!r}")
    return doc
