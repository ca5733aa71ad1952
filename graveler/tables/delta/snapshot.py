"""Reading a Delta table at a version from its log: its metadata and protocol (cheap), or its
whole state (the live files, application transactions, domains).

Both start from the newest checkpoint at or below the version (named by
``_last_checkpoint``, else found by listing the log) and read the commits after it, so the
cost follows the checkpoint interval, not the table's history. The metadata alone is first
looked for in the version's ``.crc`` file, which delta-spark writes beside each commit with
the metadata and protocol in it.

Reads go through a :class:`LogSource`: a side of a merge, or a commit of a diff.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from graveler.core.errors import CorruptFile
from graveler.tables.delta import paths
from graveler.tables.delta.actions import Action, DeltaCommit
from graveler.tables.delta.conflicts import ReadSnapshot
from graveler.tables.delta.paths import LogFileKind

_MAPS = frozenset({"partitionValues", "configuration", "tags", "options"})


class LogSource(Protocol):
    """Read access to one version of a repository (a commit)."""

    def read(self, path: str) -> bytes | None:
        """The bytes at the repository path ``path``, or None when there is none."""
        ...

    def list(self, prefix: str) -> Iterator[str]:
        """The paths under the repository prefix ``prefix``, in order."""
        ...


@dataclass
class TableState:
    """A table's state at ``version``: what a reader of that version sees."""

    version: int
    metadata: Action = field(default_factory=dict)
    protocol: Action = field(default_factory=dict)
    files: dict[str, Action] = field(default_factory=dict)
    transactions: dict[str, int] = field(default_factory=dict)
    domains: dict[str, Action] = field(default_factory=dict)

    def apply(self, actions: Iterator[Action] | tuple[Action, ...]) -> None:
        """Apply the actions of one commit (or checkpoint rows) in order."""
        for action in actions:
            kind, body = next(iter(action.items()))
            if body is None:
                continue
            if kind == "add":
                self.files[body["path"]] = body
            elif kind == "remove":
                self.files.pop(body["path"], None)
            elif kind == "metaData":
                self.metadata = body
            elif kind == "protocol":
                self.protocol = body
            elif kind == "txn":
                self.transactions[str(body["appId"])] = int(body["version"])
            elif kind == "domainMetadata":
                self._domain(body)

    def _domain(self, body: Action) -> None:
        if body.get("removed"):
            self.domains.pop(str(body["domain"]), None)
        else:
            self.domains[str(body["domain"])] = body


def read_commit(source: LogSource, root: str, version: int) -> DeltaCommit | None:
    """The parsed commit ``version`` of the table at ``root``, or None when absent."""
    path = paths.log_path(root, paths.commit_name(version))
    data = source.read(path)
    return None if data is None else DeltaCommit.parse(version, data, path)


def read_snapshot(source: LogSource, root: str, version: int) -> ReadSnapshot:
    """The metadata and protocol of the table at ``version`` (an empty snapshot for
    version -1, before the table existed)."""
    if version < 0:
        return ReadSnapshot({}, {})
    crc = source.read(paths.log_path(root, f"{version:020d}.crc"))
    if crc is not None:
        found = _from_checksum(crc)
        if found is not None:
            return found
    checkpoint = last_checkpoint(source, root, version)
    metadata: Action | None = None
    protocol: Action | None = None
    stop = checkpoint[0] if checkpoint else -1
    for v in range(version, stop, -1):
        commit = read_commit(source, root, v)
        if commit is None:
            raise CorruptFile(f"Delta table {root or '/'!r}: commit {v} is missing")
        metadata = metadata or commit.first("metaData")
        protocol = protocol or commit.first("protocol")
        if metadata is not None and protocol is not None:
            return ReadSnapshot(metadata, protocol)
    if checkpoint is not None:
        for action in _checkpoint_actions(source, checkpoint[1], ("metaData", "protocol")):
            metadata = metadata or action.get("metaData")
            protocol = protocol or action.get("protocol")
    if metadata is None or protocol is None:
        raise CorruptFile(f"Delta table {root or '/'!r}: no metadata at version {version}")
    return ReadSnapshot(metadata, protocol)


def table_state(source: LogSource, root: str, version: int) -> TableState:
    """The whole state of the table at ``version``."""
    state = TableState(version)
    checkpoint = last_checkpoint(source, root, version)
    start = 0
    if checkpoint is not None:
        state.apply(iter(_checkpoint_actions(source, checkpoint[1], None)))
        start = checkpoint[0] + 1
    for v in range(start, version + 1):
        commit = read_commit(source, root, v)
        if commit is None:
            raise CorruptFile(f"Delta table {root or '/'!r}: commit {v} is missing")
        state.apply(commit.actions)
    return state


def last_checkpoint(source: LogSource, root: str, version: int) -> tuple[int, list[str]] | None:
    """The newest checkpoint at or below ``version``: its version and the paths of its
    parts (one for a classic or V2 checkpoint), or None."""
    hint = source.read(paths.log_path(root, paths.LAST_CHECKPOINT))
    if hint is not None:
        found = _from_hint(root, hint, version)
        if found is not None:
            return found
    best: dict[int, list[str]] = {}
    for path in source.list(root + paths.LOG_DIR):
        kind = paths.classify(root, path)
        if kind is None or kind.kind is not LogFileKind.CHECKPOINT or kind.version is None:
            continue
        if kind.version <= version:
            best.setdefault(kind.version, []).append(path)
    if not best:
        return None
    newest = max(best)
    return newest, _one_checkpoint(best[newest])


def _from_hint(root: str, data: bytes, version: int) -> tuple[int, list[str]] | None:
    try:
        hint = json.loads(data)
        at = int(hint["version"])
    except (ValueError, KeyError, TypeError):
        return None
    if at > version:
        return None
    v2 = hint.get("v2Checkpoint")
    if isinstance(v2, dict) and v2.get("path"):
        return at, [paths.log_path(root, str(v2["path"]))]
    parts = hint.get("parts")
    if isinstance(parts, int) and parts > 1:
        names = [f"{at:020d}.checkpoint.{i:010d}.{parts:010d}.parquet" for i in range(1, parts + 1)]
        return at, [paths.log_path(root, n) for n in names]
    return at, [paths.log_path(root, paths.checkpoint_name(at))]


def _one_checkpoint(found: list[str]) -> list[str]:
    """The files of one checkpoint among those at a version: all parts of a multi-part
    one, else one file."""
    multi = sorted(p for p in found if p.count(".") >= 4 and p.endswith(".parquet"))
    classic = [p for p in found if p.endswith(".checkpoint.parquet")]
    if classic:
        return classic[:1]
    return multi or sorted(found)[:1]


def _from_checksum(data: bytes) -> ReadSnapshot | None:
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    metadata, protocol = doc.get("metadata"), doc.get("protocol")
    if isinstance(metadata, dict) and isinstance(protocol, dict):
        return ReadSnapshot(metadata, protocol)
    return None


def _checkpoint_actions(
    source: LogSource, files: list[str], columns: tuple[str, ...] | None
) -> list[Action]:
    """The actions of a checkpoint's files (only ``columns`` when given); a V2
    checkpoint's sidecar files are read too."""
    actions: list[Action] = []
    for path in files:
        data = source.read(path)
        if data is None:
            raise CorruptFile(f"Delta checkpoint {path!r} is missing")
        found = _parse_checkpoint(path, data, columns)
        actions.extend(found)
        sidecars = [a["sidecar"]["path"] for a in found if a.get("sidecar")]
        base = path.rsplit("/", 1)[0] + "/_sidecars/"
        for sidecar in sidecars:
            actions.extend(_checkpoint_actions(source, [base + sidecar], columns))
    return actions


def _parse_checkpoint(path: str, data: bytes, columns: tuple[str, ...] | None) -> list[Action]:
    if path.endswith(".json"):
        return list(DeltaCommit.parse(-1, data, path).actions)
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
        names = [n for n in parquet.schema_arrow.names if columns is None or n in columns]
        table = parquet.read(columns=names)
    except Exception as e:  # pyarrow raises its own error types for damaged files
        raise CorruptFile(f"Delta checkpoint {path!r} is not readable Parquet: {e}") from e
    actions: list[Action] = []
    for name in names:
        for value in table.column(name).to_pylist():
            if value is not None:
                actions.append({name: _plain(value)})
    return actions


def _plain(value: Any) -> Any:
    """A checkpoint value as the JSON action would hold it (maps as dicts, nulls left out
    of structs)."""
    if isinstance(value, dict):
        return {
            k: {} if k in _MAPS and v == [] else _plain(v)
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return {str(k): v for k, v in value}
        return [_plain(v) for v in value]
    return value
