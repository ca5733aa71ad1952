"""The merge base's table metadata, read and parsed only when a decision needs it.

A table's metadata file holds its whole history, so parsing it is the part of a merge that
grows with the table. When both sides only added snapshots (the common case: appends on a
run branch and on ``main``), nothing but the base's main snapshot is needed from the base,
and both sides still hold that snapshot unchanged: it is found there by the ID the base file
names (its top-level ``current-snapshot-id``). Anything else (a side changed the schema,
properties or refs; the sides disagree about that snapshot) parses the base in full.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from graveler.tables.iceberg import jsonio
from graveler.tables.iceberg.snapshots import by_id, main_snapshot

_KEY = b'"current-snapshot-id"'
_VALUE = re.compile(rb"\s*:\s*(-?\d+|null)\s*[,}]")
#: The key as the document's last top-level member (where pyiceberg and graveler write it).
_LAST = re.compile(rb',\s*"current-snapshot-id"\s*:\s*(-?\d+|null)\s*}\s*\Z')
_TAIL = 96


class BaseMetadata:
    """The base side of a merge (see the module docstring); ``read`` returns its bytes."""

    def __init__(
        self, read: Callable[[], bytes], source: dict[str, Any], dest: dict[str, Any]
    ) -> None:
        self._read = read
        self._source = source
        self._dest = dest

    @functools.cached_property
    def raw(self) -> bytes:
        return self._read()

    @functools.cached_property
    def doc(self) -> dict[str, Any]:
        parsed: dict[str, Any] = jsonio.loads(self.raw)
        return parsed

    def main(self) -> dict[str, Any] | None:
        """The snapshot the base's ``main`` branch points at (None: no snapshot)."""
        found = _current_ids(self.raw) if "doc" not in self.__dict__ else []
        if len(found) == 1:
            if found[0] in (b"null", b"-1"):
                return None
            sid = int(found[0])
            mine, theirs = _find(self._source, sid), _find(self._dest, sid)
            if mine is not None and theirs is not None and mine == theirs:
                return mine
        return main_snapshot(self.doc)


def _current_ids(raw: bytes) -> list[bytes]:
    """The values of every ``"current-snapshot-id"`` key in ``raw`` (found with
    ``bytes.find``: a regular expression over a long history is slower than parsing it); or,
    when the document's last top-level member is that key, its value alone. That member is
    exactly the top-level one (nothing after its ``,`` opens a string or a nesting level),
    and the last of duplicate keys is the one a parser keeps."""
    last = _LAST.search(raw, max(0, len(raw) - _TAIL))
    if last is not None:
        return [last.group(1)]
    found: list[bytes] = []
    at = raw.find(_KEY)
    while at >= 0:
        match = _VALUE.match(raw, at + len(_KEY))
        found.append(match.group(1) if match else b"?")
        at = raw.find(_KEY, at + 1)
    return found


def _find(doc: dict[str, Any], sid: int) -> dict[str, Any] | None:
    return by_id(doc).get(sid)
