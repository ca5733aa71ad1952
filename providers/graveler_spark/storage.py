"""Executor-side access to a repository's storage namespace (no database needed).

Executors get the namespace URI and the driver's store options in their task description
(:mod:`graveler_spark.settings`) and open the object store themselves; one store per
namespace is kept per Python worker process. Local namespaces are read and written in place
through :meth:`ObjectStore.local_path`; other stores are read with ranged GETs, so Parquet
footers and row groups are fetched, not whole objects.

A ``file://`` namespace only works where the driver and every executor see the same files.
Where they do not, reads and writes fail with :class:`NamespaceNotShared`, which says so.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Mapping
from typing import Any

from graveler.config import SECRET_STORE_OPTIONS
from graveler.errors import StorageError
from graveler.objectstore import ObjectStore, RangeReader, open_object_store

_stores: dict[tuple[str, tuple[tuple[str, Any], ...]], ObjectStore] = {}
_lock = threading.Lock()

#: What a file:// namespace needs on a cluster; every NamespaceNotShared error says it.
SHARED_FILESYSTEM = (
    "a file:// namespace must be on a filesystem that the driver and every executor mount "
    "at the same path (NFS, a cluster filesystem), or use an s3:// namespace"
)
#: The empty object the driver puts in a job's prefix of a local namespace; tasks check it.
DRIVER_MARKER = "_driver"
#: Where streaming writes put the driver's marker: beside the repository's namespace marker,
#: outside ``data/``, written once and kept (garbage collection leaves ``_graveler/`` alone).
STREAM_MARKER_PREFIX = "_graveler/spark-stream/"


class NamespaceNotShared(StorageError):
    """The driver and an executor do not see the same files in a ``file://`` namespace."""


def store_for(namespace: str, options: Mapping[str, Any]) -> ObjectStore:
    """The (cached) object store of ``namespace``. ``options`` are the driver's store
    options; only S3 namespaces take them. Raises StorageError, naming where credentials go,
    for an S3 namespace when neither the driver sent credentials nor this host has any."""
    if not namespace.startswith("s3://"):
        options = {}
    key = (namespace, tuple(sorted(options.items())))
    with _lock:
        store = _stores.get(key)
        if store is None:
            _require_credentials(namespace, options)
            store = _stores[key] = open_object_store(namespace, **dict(options))
        return store


def _require_credentials(namespace: str, options: Mapping[str, Any]) -> None:
    if not namespace.startswith("s3://") or SECRET_STORE_OPTIONS & set(options):
        return
    import boto3

    if boto3.session.Session().get_credentials() is None:
        raise StorageError(
            f"no S3 credentials for {namespace} on host {socket.gethostname()}: the Spark "
            "driver was given none to send with the job, and boto3's chain here (environment, "
            "~/.aws, instance role) found none. Give them to the driver once: "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment it starts with, "
            "the options store.access_key_id and store.secret_access_key, "
            "graveler_spark.register(spark, store_options=...), or "
            "spark.hadoop.fs.s3a.access.key and spark.hadoop.fs.s3a.secret.key with "
            "register(); or give every executor host an instance role or profile"
        )


def announce(store: ObjectStore, prefix: str) -> None:
    """On the driver: put :data:`DRIVER_MARKER` under ``prefix`` of a local namespace, so
    tasks can check that they see the driver's files (:func:`require_shared`)."""
    if store.local_path(prefix + DRIVER_MARKER) is not None:
        store.put(prefix + DRIVER_MARKER, b"")


def require_shared(store: ObjectStore, prefix: str) -> None:
    """On an executor, before writing: raise NamespaceNotShared unless this host sees the
    marker the driver put under ``prefix`` (local namespaces only)."""
    path = store.local_path(prefix + DRIVER_MARKER)
    if path is not None and not os.path.exists(path):
        raise NamespaceNotShared(
            f"host {socket.gethostname()} does not see the files of the Spark driver in "
            f"{store.uri} (no {prefix + DRIVER_MARKER}): {SHARED_FILESYSTEM}"
        )


def open_source(store: ObjectStore, key: str, size: int) -> Any:
    """Something pyarrow readers accept: a local path, or a ranged-read file object. Raises
    NamespaceNotShared for a local file this host does not have."""
    path = store.local_path(key)
    if path is not None:
        if not os.path.exists(path):
            raise NamespaceNotShared(
                f"{key} is listed in the repository but host {socket.gethostname()} has no "
                f"such file in {store.uri}: {SHARED_FILESYSTEM}"
            )
        return path
    import pyarrow as pa

    return pa.PythonFile(RangeReader(store, key, size), mode="r")
