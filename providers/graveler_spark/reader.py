"""Reading ``graveler://repo/ref/prefix`` with Spark: one snapshot, one partition per object.

The driver resolves the ref once and lists the objects (:func:`take_snapshot`). A tag or
commit ID is pinned to its commit, whose objects are write-once, so reading it again later
returns the same rows; a branch is read with its staged changes. Objects whose names start
with ``_`` or ``.`` (``_SUCCESS``, checksums) are skipped, as Spark does.

Each object becomes one input partition; a Parquet object larger than ``split_bytes``
(default 128 MiB) is split by row groups. Executors read the physical files straight from the
storage namespace with pyarrow and hand Spark Arrow batches.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceReader, InputPartition

from graveler import ClientSettings, Graveler
from graveler.errors import ObjectNotFound
from graveler_spark.formats import ReadFormat, conform, row_group_splits
from graveler_spark.options import Target
from graveler_spark.storage import open_source, store_for

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

    from graveler import ObjectEntry, Repository

DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024


@dataclass(frozen=True)
class FileRef:
    path: str  # the object's path in the repository
    address: str  # physical address relative to the namespace
    size: int


@dataclass(frozen=True)
class Snapshot:
    """The objects one read sees: ``commit_id`` is the commit the ref resolved to."""

    namespace: str
    commit_id: str
    files: tuple[FileRef, ...]


class FilePartition(InputPartition):
    """One object, or some row groups of one Parquet object."""

    def __init__(self, file: FileRef, row_groups: tuple[int, ...] | None = None) -> None:
        super().__init__((file.path, row_groups))
        self.file = file
        self.row_groups = row_groups


def take_snapshot(settings: ClientSettings, target: Target) -> Snapshot:
    """Resolve ``target.ref`` once and list the objects at ``target.path`` (an object, or a
    prefix read as a directory)."""
    with Graveler(settings=settings) as gv:
        return snapshot_of(gv.repository(target.repository), target)


def snapshot_of(repo: Repository, target: Target) -> Snapshot:
    """:func:`take_snapshot` with an open repository."""
    resolved = repo.resolve(target.ref)
    ref = target.ref if resolved.branch is not None else resolved.commit.id
    files = tuple(
        FileRef(e.path, e.physical_address, e.size)
        for e in _entries(repo, ref, target.path)
        if not _hidden(e.path)
    )
    return Snapshot(repo.info.storage_namespace, resolved.commit.id, files)


def _entries(repo: Repository, ref: str, path: str) -> Iterator[ObjectEntry]:
    if path:
        try:
            yield repo.stat(ref, path)
            return
        except ObjectNotFound:
            pass
    yield from repo.iter_objects(ref, f"{path}/" if path else "")


def _hidden(path: str) -> bool:
    return path.rsplit("/", 1)[-1].startswith(("_", "."))


def infer_schema(
    snapshot: Snapshot, fmt: ReadFormat, store_options: dict[str, str], merge: bool, uri: str
) -> pa.Schema:
    """The Arrow schema of the first object (of all objects, unified, when ``merge``)."""
    import pyarrow as pa

    if not snapshot.files:
        raise ObjectNotFound(
            f"no objects at {uri}, so there is no schema to infer; "
            "pass .schema(...) to read an empty prefix"
        )
    store = store_for(snapshot.namespace, store_options)
    files = snapshot.files if merge else snapshot.files[:1]
    schemas = [fmt.schema(open_source(store, f.address, f.size)) for f in files]
    return schemas[0] if len(schemas) == 1 else pa.unify_schemas(schemas)


class GravelerReader(DataSourceReader):
    """Plans partitions on the driver and reads them on executors."""

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

    def partitions(self) -> Sequence[InputPartition]:
        out: list[InputPartition] = []
        store = store_for(self.snapshot.namespace, self.store_options)
        for f in self.snapshot.files:
            if self.fmt.name == "parquet" and f.size > self.split_bytes:
                source = open_source(store, f.address, f.size)
                out.extend(FilePartition(f, g) for g in row_group_splits(source, self.split_bytes))
            else:
                out.append(FilePartition(f))
        return out

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if not isinstance(partition, FilePartition):
            return  # Spark's placeholder partition of an empty read
        from pyspark.sql.pandas.types import to_arrow_schema

        target = to_arrow_schema(self.schema, timezone="UTC")
        store = store_for(self.snapshot.namespace, self.store_options)
        source = open_source(store, partition.file.address, partition.file.size)
        for batch in self.fmt.batches(source, target, partition.row_groups):
            yield conform(batch, target)
