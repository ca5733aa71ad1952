"""Operators for single objects: upload one to a branch, read one from any ref.

* :class:`GravelerUploadOperator` stages ``content`` (text or bytes) or the local file
  ``filename`` at ``path`` on ``branch`` (commit it with ``GravelerCommitOperator``, or let
  the run branch publish it); returns ``{"path", "checksum", "size"}``.
* :class:`GravelerGetObjectOperator` reads the object at ``path`` on ``ref`` (branch, tag,
  commit ID, ``main~1``...): into the local file ``filename`` (returns
  ``{"path", "checksum", "size", "filename"}``), or, without ``filename``, as text returned
  through XCom, up to ``max_bytes`` (XCom is for small values; larger objects are refused
  with :class:`graveler.errors.InvalidArgument`).

Bytes are verified against their recorded SHA-256 when read. Every argument but ``content``
and ``max_bytes`` is templated.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graveler.errors import InvalidArgument
from graveler_airflow.operators.graveler import GravelerBaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context

    from graveler import ObjectEntry, Repository

#: The largest object returned through XCom as text.
DEFAULT_MAX_BYTES = 1 << 20


def _entry_doc(entry: ObjectEntry) -> dict[str, Any]:
    return {"path": entry.path, "checksum": entry.checksum, "size": entry.size}


class GravelerUploadOperator(GravelerBaseOperator):
    """Stage ``content`` or the local file ``filename`` at ``path`` on ``branch``."""

    template_fields: Sequence[str] = (
        *GravelerBaseOperator.template_fields,
        "branch",
        "path",
        "filename",
        "content_type",
        "metadata",
    )

    def __init__(
        self,
        *,
        branch: str,
        path: str,
        content: str | bytes | None = None,
        filename: str | None = None,
        content_type: str | None = None,
        metadata: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if (content is None) == (filename is None):
            raise InvalidArgument("GravelerUploadOperator needs exactly one of content, filename")
        self.branch = branch
        self.path = path
        self.content = content
        self.filename = filename
        self.content_type = content_type
        self.metadata = metadata

    def run(self, repo: Repository, context: Context) -> dict[str, Any]:
        kind, meta = self.content_type or None, self.metadata
        if self.filename is not None:
            with open(self.filename, "rb") as source:
                entry = repo.put(self.branch, self.path, source, content_type=kind, metadata=meta)
        else:
            data = self.content.encode() if isinstance(self.content, str) else self.content
            entry = repo.put(self.branch, self.path, data or b"", content_type=kind, metadata=meta)
        self.log.info("Staged %s on %s (%d bytes)", entry.path, self.branch, entry.size)
        return _entry_doc(entry)


class GravelerGetObjectOperator(GravelerBaseOperator):
    """Read the object at ``path`` on ``ref``: into ``filename``, or returned as text."""

    template_fields: Sequence[str] = (
        *GravelerBaseOperator.template_fields,
        "ref",
        "path",
        "filename",
    )

    def __init__(
        self,
        *,
        ref: str,
        path: str,
        filename: str | None = None,
        encoding: str = "utf-8",
        max_bytes: int = DEFAULT_MAX_BYTES,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.ref = ref
        self.path = path
        self.filename = filename
        self.encoding = encoding
        self.max_bytes = max_bytes

    def run(self, repo: Repository, context: Context) -> str | dict[str, Any]:
        entry = repo.stat(self.ref, self.path)
        if self.filename:
            target = Path(self.filename)
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".part")
            with repo.open_entry(entry) as source, open(partial, "wb") as sink:
                shutil.copyfileobj(source, sink, 1 << 20)  # verified at the end
            partial.replace(target)
            self.log.info("Read %s at %s into %s", entry.path, self.ref, target)
            return {**_entry_doc(entry), "filename": str(target)}
        if entry.size > self.max_bytes:
            raise InvalidArgument(
                f"{entry.path!r} is {entry.size} bytes, over max_bytes={self.max_bytes}: "
                "too big for XCom; pass filename= to read it into a file"
            )
        return repo.read_entry(entry).decode(self.encoding)
