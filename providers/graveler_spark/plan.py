"""The read plan the JVM shim hands to Spark's own Parquet reader (native reads).

With the shim loaded, a Parquet read of ``format("graveler")`` is planned here, on the driver,
exactly as the Python reader plans it (:func:`graveler_spark.snapshot.take_snapshot`: the ref
resolved once, markers and replaced files skipped, partitions discovered and typed), and then
read by Spark's vectorized Parquet reader from the physical files. The plan travels to the JVM
inside the schema that ``GravelerDataSource.schema()`` returns: the shim asks for it with the
internal option :data:`PLAN_OPTION`, and the answer's first field, :data:`PLAN_FIELD`, carries
the plan as JSON in its metadata (the shim removes that field before Spark sees the schema).

The JSON document (:func:`encode_plan`)::

    {"native": true, "commit": "<id>", "repository": "lake", "ref": "main",
     "path": "tables/events",
     "columns": ["day"],
     "partitions": [{"values": [7], "files": [["file:///ns/data/..", 1234], ...]}, ...]}

``native`` is false (and nothing else is sent) when the physical files are somewhere the JVM
cannot open: then the shim uses the Python reader. Partition values are sent as Spark holds
them internally: integers and doubles as numbers (``"NaN"``, ``"Infinity"`` and
``"-Infinity"`` as strings), strings as strings, decimals as decimal
strings, dates as days since 1970-01-01, timestamps as microseconds since the epoch (UTC).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from collections.abc import Iterable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from graveler_spark.storage import store_for

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructField, StructType

    from graveler_spark.options import Target
    from graveler_spark.snapshot import Snapshot

#: Internal option set by the shim: return the plan with the inferred schema.
PLAN_OPTION = "__plan"
#: Internal option set by the shim: the namespace schemes its Hadoop file systems open
#: (comma-separated; ``file``, and ``s3`` when S3A is on the class path).
SCHEMES_OPTION = "__native_schemes"
#: The name of the field that carries the plan (never seen by users).
PLAN_FIELD = "__graveler_plan"
_EPOCH_DAY = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def file_uri(namespace: str, address: str, schemes: Iterable[str]) -> str | None:
    """The URI Spark's Hadoop file systems open for the object at ``address`` (relative to
    ``namespace``, or a full URI), or None when none of ``schemes`` can open it."""
    allowed = set(schemes)
    full = address if "://" in address else None
    scheme = (full or namespace).split("://", 1)[0]
    if scheme not in allowed or _hidden(address.rsplit("/", 1)[-1]):
        return None
    if scheme == "s3":
        where = full or f"{namespace.rstrip('/')}/{address}"
        return "s3a://" + where[len("s3://") :]
    if full is not None:
        return full if full.startswith("file:///") else None
    path = store_for(namespace, {}).local_path(address)
    return "file://" + path if path is not None and os.path.isabs(path) else None


def _hidden(name: str) -> bool:
    """Names Spark's file index would skip as not data (it looks at the physical name)."""
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def spark_readable(schema: pa.Schema) -> bool:
    """Whether native reads may serve ``schema`` (the inferred Arrow schema). Not with any
    nanosecond timestamp: pyarrow reads TIMESTAMP(NANOS) columns, which Spark's reader
    refuses, and INT96 ones (Spark's own default encoding) as ``timestamp[ns]``, typed
    ``timestamp_ntz`` here; Spark reads INT96 as ``timestamp_ntz`` too, but whether its
    values match the Python reader's in every session time zone is unchecked, so both keep
    the Python reader."""
    return not any(_has_nanos(f.type) for f in schema)


def _has_nanos(kind: pa.DataType) -> bool:
    import pyarrow.types as t

    if t.is_timestamp(kind):
        return bool(kind.unit == "ns")
    return any(_has_nanos(kind.field(i).type) for i in range(kind.num_fields))


def encode_value(value: Any) -> Any:
    """A typed partition value (as :mod:`graveler_spark.partitions` types it) in JSON, as
    Spark holds it internally (see the module docstring)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return (value - _EPOCH) // dt.timedelta(microseconds=1)
    if isinstance(value, dt.date):
        return (value - _EPOCH_DAY).days
    raise TypeError(f"partition value {value!r} has no plan encoding")


def encode_plan(snapshot: Snapshot, target: Target, schemes: Iterable[str]) -> dict[str, Any]:
    """The plan of ``snapshot``, a read of ``target`` (module docstring); ``{"native":
    False}`` when a file's URI cannot be opened with ``schemes``."""
    allowed = tuple(schemes)
    groups: dict[tuple[Any, ...], list[list[Any]]] = {}
    for f in snapshot.files:
        uri = file_uri(snapshot.namespace, f.address, allowed)
        if uri is None:
            return {"native": False}
        groups.setdefault(f.values, []).append([uri, f.size])
    partitions = [
        {"values": [encode_value(v) for v in values], "files": files}
        for values, files in groups.items()
    ]
    return {
        "native": True,
        "commit": snapshot.commit_id,
        "repository": target.repository,
        "ref": target.ref,
        "path": target.path,
        "columns": list(snapshot.partition_columns),
        "partitions": partitions,
    }


def plan_field(plan: dict[str, Any]) -> StructField:
    """The field that carries ``plan`` to the shim."""
    from pyspark.sql.types import StringType, StructField

    doc = json.dumps(plan, separators=(",", ":"))
    return StructField(PLAN_FIELD, StringType(), True, {PLAN_FIELD: doc})


def with_plan(schema: StructType, plan: dict[str, Any]) -> StructType:
    """``schema`` with the plan's field first."""
    from pyspark.sql.types import StructType

    return StructType([plan_field(plan), *schema.fields])
