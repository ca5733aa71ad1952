"""Where a Delta table keeps what, by name (Delta's PROTOCOL.md, "Delta Log Entries").

A table is a prefix holding ``_delta_log/``. In that directory:

* ``00000000000000000042.json``: the commit of version 42 (one JSON action a line);
* ``00000000000000000040.checkpoint.parquet`` (and the multi-part and UUID-named forms):
  the table's whole state at a version;
* ``00000000000000000042.crc``: a checksum of the state at a version (optional);
* ``00000000000000000010.00000000000000000020.compacted.json``: a log compaction;
* ``_last_checkpoint``: a hint naming the latest checkpoint;
* ``_sidecars/``, ``_commits/``, ``_staged_commits/``: files of newer features.

Everything else under the table's prefix is data (Parquet files, deletion vectors, change
data) that the log refers to by path relative to the prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

LOG_DIR = "_delta_log/"
LAST_CHECKPOINT = "_last_checkpoint"
_VERSION_DIGITS = 20
_NAME = re.compile(
    r"^(?P<version>\d{20})\."
    r"(?:(?P<json>json)|(?P<crc>crc)|(?P<checkpoint>checkpoint(?:\.[^/]+)?\.(?:parquet|json))"
    r"|(?P<end>\d{20})\.compacted\.json)$"
)


class LogFileKind(StrEnum):
    COMMIT = "commit"
    CHECKPOINT = "checkpoint"
    CHECKSUM = "checksum"
    COMPACTION = "compaction"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class LogFile:
    """A file of ``_delta_log/``: its kind and (for versioned files) its version."""

    kind: LogFileKind
    version: int | None


def table_root(path: str) -> str | None:
    """The root prefix of the table whose log ``path`` lies in (``"sales/t/"`` for
    ``sales/t/_delta_log/x``, ``""`` for a table at the repository's root), or None."""
    if path.startswith(LOG_DIR):
        return ""
    at = path.find("/" + LOG_DIR)
    if at < 0:
        return None
    return path[: at + 1]


def log_path(root: str, name: str) -> str:
    """The repository path of ``name`` inside the log of the table at ``root``."""
    return f"{root}{LOG_DIR}{name}"


def commit_name(version: int) -> str:
    """The name of the commit file of ``version`` (zero-padded to twenty digits)."""
    return f"{version:0{_VERSION_DIGITS}d}.json"


def checkpoint_name(version: int) -> str:
    """The name of a classic single-file checkpoint at ``version``."""
    return f"{version:0{_VERSION_DIGITS}d}.checkpoint.parquet"


def classify(root: str, path: str) -> LogFile | None:
    """What the file at ``path`` is in the log of the table at ``root``, or None when it is
    not in the log (a data file)."""
    prefix = root + LOG_DIR
    if not path.startswith(prefix):
        return None
    name = path[len(prefix) :]
    found = _NAME.match(name)
    if found is None:
        return LogFile(LogFileKind.OTHER, None)
    version = int(found["version"])
    if found["json"]:
        return LogFile(LogFileKind.COMMIT, version)
    if found["crc"]:
        return LogFile(LogFileKind.CHECKSUM, version)
    if found["checkpoint"]:
        return LogFile(LogFileKind.CHECKPOINT, version)
    return LogFile(LogFileKind.COMPACTION, version)


def commit_version(root: str, path: str) -> int | None:
    """The version whose commit file ``path`` is, or None."""
    found = classify(root, path)
    if found is None or found.kind is not LogFileKind.COMMIT:
        return None
    return found.version
