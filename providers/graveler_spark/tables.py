"""Table and partition markers: overwrites that conflict instead of duplicating rows.

A table is a prefix of the repository (``tables/events``). Spark writes add data files under it
with unique names, so two branches that each *overwrite* the table would both merge cleanly and
the merged table would hold both sides' files. Markers give the overwrite a key to conflict on:

* an overwrite (``mode("overwrite")``) stages ``<table>/_graveler_table.json``; its content
  records what the overwrite replaced (the branch's commit, the objects removed), and its user
  metadata carries the overwrite's *generation* (the job ID). Two overwrites of one table on two
  branches change this key differently, so the second merge fails with a conflict under the
  default strategy;
* a dynamic partition overwrite stages ``<table>/<k=v...>/_graveler_partition.json`` in each
  partition it replaces (and a static overwrite of a partitioned table in each partition it
  writes), so overwrites of the same partitions conflict and of different partitions do not;
* every data file a Spark write stages carries, in its user metadata, the generation that
  governed its partition when it was written (``graveler-spark-generation``; empty before any
  overwrite). Appends add files and never touch a marker, so appends on two branches merge
  cleanly.

Readers skip marker objects (their names start with ``_``) and read a file only when it is
*live*: it has no generation (written by other means), or its generation is the one governing
its partition now. A partition marker governs its partition when it was written under the
table's current generation; otherwise the table marker governs. So when a merge with a strategy
resolves the marker conflicts to one side, the other side's files stay as objects but are not
part of the table: that side loses wholly, and a later overwrite removes its files.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from graveler import ObjectEntry, new_physical_address

if TYPE_CHECKING:
    from graveler import Repository

TABLE_MARKER = "_graveler_table.json"
PARTITION_MARKER = "_graveler_partition.json"
GENERATION = "graveler-spark-generation"  # user metadata key on data files and markers
UNDER_TABLE = "graveler-spark-table-generation"  # on partition markers
MARKER_CONTENT_TYPE = "application/json"


def marker_dir(path: str) -> str:
    """The directory of a marker path (``""`` for one at the repository root)."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


@dataclass(frozen=True)
class Generations:
    """The markers found under a table root: which generation governs each directory."""

    table: str = ""
    partitions: Mapping[str, str] = field(default_factory=dict)  # directory -> generation

    @classmethod
    def from_entries(cls, markers: Iterable[ObjectEntry]) -> Generations:
        """Read the markers' metadata (no object bytes are read). ``markers`` are the marker
        objects under the table root and in the directories above the read path; the deepest
        table marker is the table's."""
        table, table_depth = "", -1
        found: dict[str, tuple[str, str]] = {}
        for e in markers:
            generation = e.metadata.get(GENERATION, "")
            name = e.path.rsplit("/", 1)[-1]
            if name == TABLE_MARKER and e.path.count("/") > table_depth:
                table, table_depth = generation, e.path.count("/")
            elif name == PARTITION_MARKER:
                found[marker_dir(e.path)] = (generation, e.metadata.get(UNDER_TABLE, ""))
        partitions = {d: gen for d, (gen, under) in found.items() if under == table}
        return cls(table, partitions)

    def governing(self, directory: str) -> str:
        """The generation files in ``directory`` must carry to be part of the table."""
        return self.partitions.get(directory, self.table)

    def live(self, entry: ObjectEntry) -> bool:
        generation = entry.metadata.get(GENERATION)
        if generation is None:
            return True  # not written by a Spark job: always part of the table
        return generation == self.governing(marker_dir(entry.path))


def is_marker(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name in (TABLE_MARKER, PARTITION_MARKER)


def marker_content(job_id: str, mode: str, branch: str, commit_id: str, removed: int) -> bytes:
    """The JSON a marker holds: what the overwrite replaced, for people and audits."""
    doc = {
        "format": 1,
        "operation": "overwrite",
        "mode": mode,
        "job_id": job_id,
        "branch": branch,
        "replaced": {"commit_id": commit_id, "objects_removed": removed},
        "written_at": datetime.now(UTC).isoformat(),
    }
    return json.dumps(doc, sort_keys=True).encode() + b"\n"


@dataclass(frozen=True)
class TableWrite:
    """One Spark write into the table at ``prefix`` of ``branch``.

    ``dynamic``: replace only the partitions written (``partitionOverwriteMode=dynamic``);
    it applies to overwrites of partitioned writes only, as in Spark."""

    branch: str
    prefix: str
    job_id: str
    overwrite: bool = False
    dynamic: bool = False
    partitioned: bool = False
    metadata: Mapping[str, str] = field(default_factory=dict)  # the job's, on markers too


def stage_table_write(
    repo: Repository,
    write: TableWrite,
    entries: Sequence[ObjectEntry],
    also_delete: Sequence[str] = (),
) -> int:
    """Stage ``entries`` (the files a job wrote under ``write.prefix``) in one transaction,
    with the generations, markers and removals the write's mode calls for (and the paths in
    ``also_delete``); returns how many data files were staged. A marker object stored here is
    deleted again if staging fails."""
    dirs = sorted({_partition_dir(write.prefix, e.path) for e in entries} - {""})
    dirs = dirs if write.partitioned else []
    current = _current(repo, write, dirs)
    if not write.overwrite:
        tagged = [_tag(e, current.governing(marker_dir(e.path))) for e in entries]
        return repo.stage_entries(write.branch, tagged, delete=also_delete)
    dynamic = write.dynamic and write.partitioned
    under = [f"{_join(write.prefix, d)}/" for d in dirs] if dynamic else [dir_prefix(write.prefix)]
    new = {e.path for e in entries}
    delete = [
        o.path for u in under for o in repo.iter_objects(write.branch, u) if o.path not in new
    ]
    delete += [p for p in also_delete if p not in new]
    markers = _markers(repo, write, dirs, current.table if dynamic else write.job_id, len(delete))
    tagged = [_tag(e, write.job_id) for e in entries]
    try:
        repo.stage_entries(write.branch, [*tagged, *markers], delete=delete)
    except BaseException:
        for m in markers:
            repo.store.delete(m.physical_address)
        raise
    return len(tagged)


def _current(repo: Repository, write: TableWrite, dirs: Sequence[str]) -> Generations:
    """The markers on the branch now: the table's, and those of the partitions written."""
    keys = [_join(write.prefix, TABLE_MARKER)]
    keys += [_join(write.prefix, f"{d}/{PARTITION_MARKER}") for d in dirs]
    return Generations.from_entries(e for e in repo.stat_many(write.branch, keys) if e is not None)


def _markers(
    repo: Repository, write: TableWrite, dirs: Sequence[str], table: str, removed: int
) -> list[ObjectEntry]:
    """The marker objects an overwrite stages (stored now, staged with the files)."""
    head = repo.branch(write.branch).commit_id
    mode = "dynamic" if write.dynamic and write.partitioned else "static"
    content = marker_content(write.job_id, mode, write.branch, head, removed)
    paths: list[tuple[str, dict[str, str]]] = []
    if mode == "static":
        meta = {**write.metadata, GENERATION: write.job_id}
        paths.append((_join(write.prefix, TABLE_MARKER), meta))
    for d in dirs:
        meta = {**write.metadata, GENERATION: write.job_id, UNDER_TABLE: table}
        paths.append((_join(write.prefix, f"{d}/{PARTITION_MARKER}"), meta))
    out = []
    for path, meta in paths:
        address = new_physical_address()
        info = repo.store.put(address, content)
        out.append(
            ObjectEntry(
                path=path,
                physical_address=address,
                size=info.size,
                checksum=hashlib.sha256(content).hexdigest(),
                mtime=info.mtime,
                content_type=MARKER_CONTENT_TYPE,
                metadata=meta,
            )
        )
    return out


def _tag(entry: ObjectEntry, generation: str) -> ObjectEntry:
    """``entry`` carrying ``generation`` (untouched when there is none: before any overwrite
    a file needs no generation, being live under every later one until removed)."""
    if not generation:
        return entry
    return replace(entry, metadata={**entry.metadata, GENERATION: generation})


def _partition_dir(prefix: str, path: str) -> str:
    """The directory of ``path`` below ``prefix`` (``""`` for a file directly in it)."""
    relative = path[len(prefix) + 1 :] if prefix else path
    return marker_dir(relative)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def dir_prefix(prefix: str) -> str:
    """``prefix`` as a directory (``t`` -> ``t/``; the whole branch stays ``""``)."""
    return f"{prefix}/" if prefix else ""
