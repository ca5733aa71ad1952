"""Changing tables and namespaces on a branch: one graveler commit per catalog change,
made by compare-and-swap on the branch head.

:func:`commit_on_branch` reads the branch, lets the caller build its changes from the head
commit (reading the tables there, checking requirements, writing new metadata files), builds
the tree over the head and moves the branch with one compare-and-swap. When the branch moved
meanwhile (any commit on it, to any table), everything is built again from the new head: a
change whose requirements no longer hold then fails with TableCommitFailed, which is how two
commits racing on one table end with one winner and one 409. Staged (uncommitted) changes of
the branch stay staged. Files written by an attempt that then lost are unreferenced and
garbage collection removes them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graveler.core import validate
from graveler.core.errors import ProtectedBranch
from graveler.core.hookevents import EventRecord, HookEvent
from graveler.core.model import Commit
from graveler.storage.committed.apply import Change
from graveler.storage.entry import ObjectEntry
from graveler.tables.iceberg import jsonio
from graveler.tables.iceberg.fileio import NamespaceIO, WrittenFile
from graveler.tables.iceberg.files import FileChanges, transition
from graveler.tables.iceberg.names import TableName, location_address
from graveler.tables.iceberg.state import uri_of
from graveler.versioning.commit import advance_branch, default_committer, retry_moved
from graveler.versioning.writes import make_linked_entry
from graveler.views.context import RepoContext, hooked
from graveler.views.history import make_commit
from graveler.views.reads import stat_many

JSON_TYPE = "application/json"


@dataclass
class Edit:
    """What one attempt decided: tree changes (key -> entry, None to remove), the commit
    message and metadata, and a result for the caller."""

    changes: dict[str, ObjectEntry | None] = field(default_factory=dict)
    message: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    result: Any = None

    def apply(self, files: FileChanges) -> None:
        for key in files.removed:
            self.changes[key] = None
        self.changes.update(files.added)


def commit_on_branch(
    repo: RepoContext,
    branch: str,
    build: Callable[[Commit], Edit],
    *,
    committer: str | None = None,
) -> tuple[Commit, Edit]:
    """Build an edit from the branch head and commit it by compare-and-swap, rebuilding from
    the new head whenever the branch moved (see the module docstring). An edit that changes
    nothing makes no commit (the head is returned). Raises ProtectedBranch, BranchNotFound,
    HookAborted and whatever ``build`` raises."""
    who = committer or default_committer()

    def attempt() -> tuple[Commit, Edit]:
        b = repo.refs.get_branch(repo.name, branch)
        if b.protected:
            raise ProtectedBranch(
                f"branch {branch!r} is protected: commit tables on another branch and merge"
            )
        head = repo.get_commit(b.commit_id)
        edit = build(head)
        changes = [
            Change(key.encode(), entry.to_record() if entry is not None else None)
            for key, entry in sorted(edit.changes.items())
        ]
        metarange_id, _ = repo.committed.apply(head.metarange_id, changes)
        if metarange_id == head.metarange_id:
            return head, edit
        proposed = make_commit([head], metarange_id, edit.message, who, edit.metadata)
        event = EventRecord(HookEvent.PRE_COMMIT, proposed, branch=branch, source_ref=branch)
        with hooked(repo, event):
            new = advance_branch(repo, b, proposed)
        return new, edit

    return retry_moved(attempt, f"table commit on {branch!r}")


def present_at(repo: RepoContext, commit_id: str) -> Callable[[list[str]], set[str]]:
    """The keys of a list that exist at ``commit_id``."""

    def present(keys: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(keys), 1000):
            chunk = keys[start : start + 1000]
            found.update(
                k for k, e in zip(chunk, stat_many(repo, commit_id, chunk), strict=True) if e
            )
        return found

    return present


def entry_of(path: str, written: WrittenFile, content_type: str | None = None) -> ObjectEntry:
    """The entry for a file this process wrote."""
    return ObjectEntry(
        path=path,
        physical_address=written.address,
        size=written.size,
        checksum=written.checksum,
        mtime=written.mtime,
        content_type=content_type or _content_type(path),
    )


def linking(repo: RepoContext, io: NamespaceIO) -> Callable[[str, str], ObjectEntry]:
    """Entries for referenced files: from what ``io`` wrote, else read from the store (size,
    time and SHA-256: ObjectNotFound when a file the metadata names is missing)."""

    def entry_for(key: str, address: str) -> ObjectEntry:
        written = io.written.get(address)
        if written is not None:
            return entry_of(key, written)
        return make_linked_entry(repo, key, address, content_type=_content_type(key))

    return entry_for


def _content_type(key: str) -> str:
    if key.endswith(".json"):
        return JSON_TYPE
    if key.endswith(".avro"):
        return "application/avro"
    if key.endswith(".parquet"):
        return "application/vnd.apache.parquet"
    return "application/octet-stream"


def metadata_address(location: str, previous: str | None) -> str:
    """A new metadata file's address under the table location (address form), numbered
    after the previous file's version like Iceberg's own catalogs do."""
    version = 0
    if previous:
        head = previous.rsplit("/", 1)[-1].split("-", 1)[0]
        version = int(head) + 1 if head.isdigit() else 0
    return f"{location.rstrip('/')}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"


def store_metadata(
    repo: RepoContext,
    io: NamespaceIO,
    name: TableName,
    raw: bytes,
    previous: str | None,
) -> tuple[str, ObjectEntry, dict[str, Any]]:
    """Write a table's new metadata file; its URI, its pointer entry and the parsed document."""
    doc = jsonio.loads(raw)
    location = location_address(io.namespace, doc["location"])
    written = io.write(metadata_address(location, previous), raw)
    entry = entry_of(name.pointer, written, JSON_TYPE)
    return uri_of(repo, entry), entry, doc


def commit_message(what: str, name: TableName | str, details: Mapping[str, str]) -> str:
    extra = ", ".join(f"{k} {v}" for k, v in details.items())
    text = f"iceberg: {what} {name}" + (f" ({extra})" if extra else "")
    return validate.text(text[:1000], "commit message")


def transition_for(
    repo: RepoContext,
    io: NamespaceIO,
    head: Commit,
    name: TableName,
    old: dict[str, Any] | None,
    new: dict[str, Any],
) -> FileChanges:
    """The file entries a table needs at ``head`` to go from ``old`` to ``new``."""
    return transition(io, name.root, old, new, present_at(repo, head.id), linking(repo, io))
