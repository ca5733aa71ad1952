"""Iceberg namespaces and tables of one repository: the catalog's engine, under both the REST
catalog (:mod:`graveler.server.catalog.rest`) and the in-process pyiceberg catalog.

The first level of every namespace is a ref. Reads work at any ref (a branch is read at
its head commit); every change is one commit on a branch (:mod:`.commit`), refused at a tag
or commit (ReadOnlyRef). Table changes follow the Iceberg REST protocol: requirements are
checked against the table as the branch head has it (TableCommitFailed when they fail),
updates are applied there (pyiceberg's own implementation of the spec), a new metadata file
is written and the tree gains the files the new metadata references.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadataUtil, TableMetadataV1, new_table_metadata
from pyiceberg.table.sorting import SortOrder
from pyiceberg.table.update import AssertCreate, update_table_metadata

from graveler.core.errors import (
    AlreadyExists,
    InvalidArgument,
    TableCommitFailed,
    TableNotFound,
)
from graveler.core.model import Commit
from graveler.tables.iceberg import jsonio
from graveler.tables.iceberg import state as st
from graveler.tables.iceberg.base import checked_properties
from graveler.tables.iceberg.commit import (
    Edit,
    commit_message,
    store_metadata,
    transition_for,
)
from graveler.tables.iceberg.fileio import NamespaceIO
from graveler.tables.iceberg.names import (
    TableName,
    check_levels,
    location_address,
    location_for,
)
from graveler.tables.iceberg.namespaces import NamespaceOps
from graveler.versioning.writes import make_linked_entry


@dataclass(frozen=True, slots=True)
class TableResult:
    """A table as an operation left it: its metadata file (None for a staged create) and the
    metadata JSON; ``commit_id`` is the commit that holds it."""

    location: str | None
    raw: bytes
    commit_id: str


#: One table's change in a commit: (table, requirements, updates) as pyiceberg models.
TableChangeRequest = tuple[TableName, Sequence[Any], Sequence[Any]]


class IcebergCatalog(NamespaceOps):
    """The Iceberg namespaces and tables of ``repo`` (see the module docstring);
    ``committer`` names the commits it makes; ``labels`` (user metadata) are recorded on
    those commits and on the pointer entries it writes (an orchestrator names the run that
    wrote a table with them)."""

    # --- tables ---------------------------------------------------------------------------------

    def list_tables(self, ref: str, levels: Sequence[str]) -> list[TableName]:
        at, path = self.at(ref), check_levels(tuple(levels))
        st.require_namespace(self.repo, at, path)
        _, tables = st.children(self.repo, at.commit.id, path)
        return [TableName(path, t) for t in tables]

    def load_table(self, ref: str, name: TableName) -> st.TableState:
        return st.require_table(self.repo, self.at(ref), name)

    def table_exists(self, ref: str, name: TableName) -> bool:
        return st.read_table(self.repo, self.at(ref).commit.id, name) is not None

    def create_table(
        self,
        ref: str,
        name: TableName,
        schema: Schema,
        *,
        spec: PartitionSpec | None = None,
        order: SortOrder | None = None,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
        stage: bool = False,
    ) -> TableResult:
        """Create a table (``stage``: only prepare its metadata for a create transaction,
        committed later with ``assert-create``)."""
        table_uuid = uuid.uuid4()
        where = (location or "").rstrip("/") or location_for(self.storage, str(table_uuid))
        location_address(self.storage, where)
        meta = new_table_metadata(
            schema,
            spec or PartitionSpec(),
            order or SortOrder(),
            where,
            dict(checked_properties(properties)),
            table_uuid=table_uuid,
        )
        raw = meta.model_dump_json().encode()
        at = self.at(ref)
        if stage:
            self._check_new_table(at.commit, ref, name)
            return TableResult(None, raw, at.commit.id)
        io = self.io()

        def build(head: Commit) -> Edit:
            self._check_new_table(head, ref, name)
            uri, pointer, _ = store_metadata(self.repo, io, name, raw, None)
            edit = Edit({name.pointer: pointer}, commit_message("create table", name, {}))
            edit.metadata = {"iceberg.table": str(name)}
            edit.result = TableResult(uri, raw, "")
            return edit

        return self._table_commit(at.writable().name, build)

    def commit_table(
        self, ref: str, name: TableName, requirements: Sequence[Any], updates: Sequence[Any]
    ) -> TableResult:
        """Check ``requirements`` and apply ``updates`` (pyiceberg models) to one table."""
        return self.commit_tables(ref, [(name, requirements, updates)])[0]

    def commit_tables(self, ref: str, changes: Sequence[TableChangeRequest]) -> list[TableResult]:
        """Several tables changed in one commit: all or none (a transaction)."""
        names = [str(c[0]) for c in changes]
        if not changes or len(set(names)) != len(names):
            raise InvalidArgument("a transaction names each table once, and at least one")
        branch = self.at(ref).writable().name
        io = self.io()

        def build(head: Commit) -> Edit:
            edit = Edit()
            results = [self._apply(io, head, ref, c, edit) for c in changes]
            shown = names[0] if len(names) == 1 else f"{len(names)} tables"
            details = _snapshot_details(results) if len(names) == 1 else {}
            edit.message = commit_message("commit", shown, details)
            edit.metadata = {"iceberg.tables": ",".join(names)[:4000]}
            edit.result = results
            return edit

        commit, edit = self._commit(branch, build)
        return [TableResult(r.location, r.raw, commit.id) for r in edit.result]

    def drop_table(self, ref: str, name: TableName, *, purge: bool = False) -> st.TableState:
        """Remove a table from the branch. Its files stay for the commits that still have
        it; garbage collection deletes them once no retained commit does (``purge`` cannot
        do more without breaking history, so it does the same)."""
        branch = self.at(ref).writable().name

        def build(head: Commit) -> Edit:
            state = self._require_table(head, ref, name)
            gone: dict[str, Any] = {
                e.path: None for e in st.entries_under(self.repo, head.id, name.root)
            }
            edit = Edit(gone, commit_message("drop table", name, {"purge": str(purge).lower()}))
            edit.result = state
            return edit

        _, edit = self._commit(branch, build)
        dropped: st.TableState = edit.result
        return dropped

    def rename_table(self, ref: str, source: TableName, dest: TableName) -> None:
        branch = self.at(ref).writable().name

        def build(head: Commit) -> Edit:
            self._require_table(head, ref, source)
            self._check_new_table(head, ref, dest)
            changes: dict[str, Any] = {}
            for e in st.entries_under(self.repo, head.id, source.root):
                changes[e.path] = None
                moved = dest.root + e.path[len(source.root) :]
                changes[moved] = replace(e, path=moved)
            return Edit(changes, commit_message("rename table", source, {"to": str(dest)}))

        self._commit(branch, build)

    def register_table(
        self, ref: str, name: TableName, metadata_location: str, *, overwrite: bool = False
    ) -> TableResult:
        """Make an existing metadata file (inside the namespace's ``data/``) the table's
        current metadata; every file it references is added to the tree."""
        io = self.io()
        address = io.address(metadata_location)
        raw = io.read(address)
        try:
            meta = TableMetadataUtil.parse_raw(raw.decode())
        except (ValueError, ValidationError) as exc:
            raise InvalidArgument(f"{metadata_location} is not Iceberg table metadata") from exc
        location_address(self.storage, meta.location)
        branch = self.at(ref).writable().name

        def build(head: Commit) -> Edit:
            old = st.read_table(self.repo, head.id, name)
            if old is not None and not overwrite:
                raise AlreadyExists(f"table {name} already exists at {ref!r}")
            if old is None:
                self._check_new_table(head, ref, name)
            pointer = make_linked_entry(self.repo, name.pointer, address)
            doc = st.TableState(name, head.id, pointer, metadata_location, raw).doc
            edit = Edit({name.pointer: pointer}, commit_message("register table", name, {}))
            edit.apply(transition_for(self.repo, io, head, name, old.doc if old else None, doc))
            edit.result = TableResult(st.uri_of(self.repo, pointer), raw, "")
            return edit

        return self._table_commit(branch, build)

    # --- helpers --------------------------------------------------------------------------------

    def _apply(
        self, io: NamespaceIO, head: Commit, ref: str, change: TableChangeRequest, edit: Edit
    ) -> TableResult:
        name, requirements, updates = change
        state = st.read_table(self.repo, head.id, name)
        if state is None and not any(isinstance(r, AssertCreate) for r in requirements):
            raise TableNotFound(f"table {name} does not exist at {ref!r}")
        if state is None:
            self._check_new_table(head, ref, name)
        base = state.metadata if state is not None else None
        for requirement in requirements:
            try:
                requirement.validate(base)
            except CommitFailedException as exc:
                raise TableCommitFailed(f"table {name} at {ref!r}: {exc}") from None
        raw = _updated(name, base, updates, state.location if state else None)
        uri, pointer, doc = store_metadata(
            self.repo, io, name, raw, state.location if state else None
        )
        edit.changes[name.pointer] = pointer
        old = state.doc if state is not None else None
        edit.apply(transition_for(self.repo, io, head, name, old, doc))
        return TableResult(uri, raw, "")

    def _table_commit(self, branch: str, build: Any) -> TableResult:
        commit, edit = self._commit(branch, build)
        result: TableResult = edit.result
        return TableResult(result.location, result.raw, commit.id)


def _updated(name: TableName, base: Any, updates: Sequence[Any], location: str | None) -> bytes:
    """The metadata JSON after ``updates`` (InvalidArgument when the spec refuses one)."""
    start = base
    if start is None:
        # unvalidated, as pyiceberg's own catalogs start a create transaction: no schemas
        # yet, so the first add-schema is schema 0
        start = TableMetadataV1.model_construct(last_column_id=-1, schema=Schema())
    try:
        new = update_table_metadata(
            start, tuple(updates), enforce_validation=base is None, metadata_location=location
        )
    except (ValueError, ValidationError, NotImplementedError) as exc:
        raise InvalidArgument(f"table {name}: {exc}") from None
    return new.model_dump_json().encode()


def _snapshot_details(results: Sequence[TableResult]) -> dict[str, str]:
    doc = jsonio.loads(results[0].raw)
    current = doc.get("current-snapshot-id")
    for snap in doc.get("snapshots") or ():
        if snap.get("snapshot-id") == current:
            op = (snap.get("summary") or {}).get("operation", "")
            return {"snapshot": str(current), "operation": str(op)}
    return {}
