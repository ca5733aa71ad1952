"""What a snapshot changed, file by file, and writing the manifests of replayed snapshots.

A snapshot's own changes are in the manifests it wrote (``added_snapshot_id`` is its ID):
entries ADDED by it are the files it added, entries DELETED by it the files it removed.
:func:`snapshot_changes` reads exactly those manifests, so its cost follows the snapshot, not
the table. Files are told apart by content (data, position deletes, equality deletes) and
located by partition (spec ID and partition values), which is the granularity at which the
merge checks Iceberg's conflict rules.

Writing uses pyiceberg's Avro writers. pyiceberg writes data manifests only, so delete
manifests are written by :class:`DeleteManifestWriter`, its data writer with the content
switched to deletes; format version 3 manifests are not written at all (the merge refuses
to replay on such tables).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from copy import copy
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.avro.codecs import AvroCompressionCodec
from pyiceberg.manifest import (
    DataFileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriterV1,
    ManifestWriterV2,
    write_manifest_list,
)
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema

from graveler.tables.iceberg.fileio import NamespaceIO
from graveler.tables.iceberg.files import entries, manifests

CODEC: AvroCompressionCodec = "deflate"
#: (spec ID, partition values): where a file lives, as the merge compares them.
Partition = tuple[int, tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class FileRef:
    """One data or delete file as a manifest entry has it."""

    path: str
    content: DataFileContent
    partition: Partition
    referenced: str | None  # a position delete file's one data file, when it names it

    @property
    def is_data(self) -> bool:
        return self.content == DataFileContent.DATA


def file_ref(entry: ManifestEntry) -> FileRef:
    data = entry.data_file
    values = tuple(data.partition[i] for i in range(len(data.partition)))
    referenced = getattr(data, "referenced_data_file", None)
    return FileRef(data.file_path, data.content, (data.spec_id, values), referenced)


@dataclass
class Changes:
    """Files added and removed by one or more snapshots."""

    added: list[FileRef] = field(default_factory=list)
    removed: list[FileRef] = field(default_factory=list)

    def extend(self, other: Changes) -> None:
        self.added.extend(other.added)
        self.removed.extend(other.removed)

    def paths(self, which: str) -> set[str]:
        return {f.path for f in getattr(self, which)}


def own_manifests(io: NamespaceIO, snapshot: dict[str, Any]) -> list[ManifestFile]:
    """The manifests ``snapshot`` wrote itself."""
    sid = snapshot["snapshot-id"]
    return [m for m in manifests(io, snapshot) if m.added_snapshot_id == sid]


def snapshot_changes(io: NamespaceIO, snapshot: dict[str, Any]) -> Changes:
    """The files ``snapshot`` added and removed."""
    sid = snapshot["snapshot-id"]
    out = Changes()
    for manifest in own_manifests(io, snapshot):
        for entry in entries(io, manifest, live=False):
            if entry.snapshot_id != sid:
                continue
            if entry.status == ManifestEntryStatus.ADDED:
                out.added.append(file_ref(entry))
            elif entry.status == ManifestEntryStatus.DELETED:
                out.removed.append(file_ref(entry))
    return out


def live_at(
    io: NamespaceIO, snapshot: dict[str, Any] | None
) -> Iterator[tuple[str, ManifestEntry, Partition]]:
    """Every live file of ``snapshot`` (the whole table: only for operations that must see
    every file, such as replacing partitions)."""
    for manifest in manifests(io, snapshot) if snapshot is not None else []:
        for entry in entries(io, manifest):
            yield entry.data_file.file_path, entry, file_ref(entry).partition


class DeleteManifestWriter(ManifestWriterV2):
    """pyiceberg's v2 manifest writer, writing a delete manifest."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


@dataclass(frozen=True)
class TableModel:
    """What writing manifests needs from the table: format version, schema, specs."""

    location: str
    format_version: int
    schema: Schema
    specs: dict[int, PartitionSpec]

    @classmethod
    def of(cls, doc: dict[str, Any]) -> TableModel:
        current = doc.get("current-schema-id")
        schemas = doc.get("schemas") or [doc.get("schema")]
        chosen = next((s for s in schemas if s and s.get("schema-id") == current), schemas[-1])
        specs = {
            int(s["spec-id"]): PartitionSpec.model_validate(s)
            for s in doc.get("partition-specs") or ()
        }
        return cls(
            doc["location"], int(doc["format-version"]), Schema.model_validate(chosen), specs
        )

    def manifest_uri(self) -> str:
        return f"{self.location.rstrip('/')}/metadata/{uuid.uuid4()}-m0.avro"


def write_entries(
    io: NamespaceIO,
    table: TableModel,
    like: ManifestFile,
    snapshot_id: int,
    rows: Iterable[tuple[str, ManifestEntry]],
) -> ManifestFile:
    """A new manifest like ``like`` (same spec and content) holding ``rows``: (how, entry)
    with how "added", "existing" or "deleted"."""
    spec = table.specs[like.partition_spec_id]
    output = io.new_output(table.manifest_uri())
    deletes = like.content == ManifestContent.DELETES
    if table.format_version == 1:
        cls: type[ManifestWriterV1] | type[ManifestWriterV2] = ManifestWriterV1
    else:
        cls = DeleteManifestWriter if deletes else ManifestWriterV2
    writer = cls(spec, table.schema, output, snapshot_id, CODEC)
    with writer:
        for how, entry in rows:
            if how == "added":
                writer.add_entry(_added(entry, snapshot_id))
            elif how == "existing":
                writer.existing(entry)
            else:
                writer.delete(entry)
    return writer.to_manifest_file()


def _added(entry: ManifestEntry, snapshot_id: int) -> ManifestEntry:
    return ManifestEntry.from_args(
        status=ManifestEntryStatus.ADDED,
        snapshot_id=snapshot_id,
        sequence_number=entry.sequence_number,
        file_sequence_number=None,
        data_file=entry.data_file,
    )


def with_sequence(manifest: ManifestFile, old: int, new: int) -> ManifestFile:
    """A manifest written for a snapshot of sequence number ``old``, listed again for its
    replay at ``new``: what it inherited from ``old`` it now inherits from ``new``."""
    moved = copy(manifest)
    moved.sequence_number = new
    if manifest.min_sequence_number in (old, -1):
        moved.min_sequence_number = new
    return moved


def write_list(
    io: NamespaceIO,
    table: TableModel,
    snapshot_id: int,
    parent_id: int | None,
    sequence_number: int,
    listed: Sequence[ManifestFile],
) -> str:
    """Write a manifest list; returns its URI."""
    uri = f"{table.location.rstrip('/')}/metadata/snap-{snapshot_id}-1-{uuid.uuid4()}.avro"
    seq = sequence_number if table.format_version > 1 else None
    writer = write_manifest_list(
        table.format_version,  # type: ignore[arg-type]
        io.new_output(uri),
        snapshot_id,
        parent_id,
        seq,
        CODEC,
    )
    with writer:
        writer.add_manifests(list(listed))
    return uri
