"""Object entries: what a key maps to, and how it is encoded in staging and in trees.

The *identity* of an entry hashes what a user sees (checksum, size, content type, user
metadata) and not where the bytes live, so re-uploading identical content is "no change" for
commit, diff and merge. The *value* is a compact JSON document with every field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from graveler.committed.record import ValueRecord
from graveler.errors import CorruptFile
from graveler.model import StagedEntry

DEFAULT_CONTENT_TYPE = "application/octet-stream"


@dataclass(frozen=True, slots=True)
class ObjectEntry:
    """An object as stored in a branch, tag or commit."""

    path: str
    physical_address: str  # relative to the repository's storage namespace
    size: int
    checksum: str  # hex sha256 of the content
    mtime: datetime
    content_type: str = DEFAULT_CONTENT_TYPE
    metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> bytes:
        return self.path.encode("utf-8")

    def identity(self) -> bytes:
        doc = [self.checksum, self.size, self.content_type, sorted(self.metadata.items())]
        return hashlib.sha256(json.dumps(doc, separators=(",", ":")).encode()).digest()

    def encode(self) -> bytes:
        doc = {
            "a": self.physical_address,
            "s": self.size,
            "c": self.checksum,
            "m": self.mtime.timestamp(),
            "t": self.content_type,
        }
        if self.metadata:
            doc["u"] = dict(self.metadata)
        return json.dumps(doc, separators=(",", ":")).encode()

    def to_record(self) -> ValueRecord:
        return ValueRecord(self.key, self.identity(), self.encode())

    def to_staged(self) -> StagedEntry:
        return StagedEntry(self.key, self.identity(), self.encode())


def decode(key: bytes, value: bytes) -> ObjectEntry:
    try:
        doc = json.loads(value)
        return ObjectEntry(
            path=key.decode("utf-8"),
            physical_address=doc["a"],
            size=int(doc["s"]),
            checksum=doc["c"],
            mtime=datetime.fromtimestamp(doc["m"], UTC),
            content_type=doc.get("t", DEFAULT_CONTENT_TYPE),
            metadata=doc.get("u", {}),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptFile(f"entry for {key!r} is not a valid object entry") from exc
