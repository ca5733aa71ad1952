"""A pyiceberg catalog over one repository, in process: :class:`GravelerCatalog`.

    from graveler import Graveler
    from graveler.tables.iceberg import GravelerCatalog

    repo = Graveler().repository("lake")
    catalog = GravelerCatalog("lake", repo)
    catalog.create_namespace(("main", "sales"))
    table = catalog.load_table("main.sales.orders")      # ref.namespace.table
    table.append(arrow_table)                            # one commit on branch main

Identifiers are ``(ref, *namespace, table)`` as in the REST catalog. Errors are pyiceberg's
own (NoSuchTableError, CommitFailedException...), so code written against any pyiceberg
catalog works unchanged. Data files are read and written with pyiceberg's default FileIO
(pyarrow) at the table's location in the storage namespace; for ``s3://`` namespaces pass
the usual ``s3.*`` properties.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import MetastoreCatalog
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import CommitTableResponse, StagedTable, Table
from pyiceberg.table.metadata import TableMetadataUtil
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties

from graveler.core.errors import (
    AlreadyExists,
    TableCommitFailed,
    TableNamespaceNotEmpty,
    TableNamespaceNotFound,
    TableNotFound,
)
from graveler.tables.iceberg.catalog import IcebergCatalog
from graveler.tables.iceberg.names import TableName, location_for
from graveler.versioning.branches import list_branches
from graveler.views.context import RepoContext

if TYPE_CHECKING:
    from pyiceberg.table.update import TableRequirement, TableUpdate


class GravelerCatalog(MetastoreCatalog):
    """pyiceberg's Catalog for the Iceberg tables of ``repository`` (see the module
    docstring). ``committer`` names the commits; ``labels`` are user metadata recorded on
    them and on the tables' pointer entries; ``properties`` configure pyiceberg (FileIO
    settings such as ``s3.endpoint``)."""

    def __init__(
        self,
        name: str,
        repository: RepoContext,
        *,
        committer: str | None = None,
        labels: Mapping[str, str] | None = None,
        **properties: str,
    ) -> None:
        super().__init__(name, **properties)
        self.repository = repository
        self.engine = IcebergCatalog(repository, committer=committer, labels=labels)

    # --- tables ---------------------------------------------------------------------------------

    def create_table(
        self,
        identifier: str | Identifier,
        schema: Schema | Any,  # or a pyarrow schema
        location: str | None = None,
        partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
        sort_order: SortOrder = UNSORTED_SORT_ORDER,
        properties: Properties = EMPTY_DICT,
    ) -> Table:
        ref, name = _split(identifier)
        fmt = int(properties.get("format-version", 2))
        with _translated():
            done = self.engine.create_table(
                ref,
                name,
                self._convert_schema_if_needed(schema, fmt),  # type: ignore[arg-type]
                spec=partition_spec,
                order=sort_order,
                location=location,
                properties=properties,
            )
        return self._table(identifier, done.raw, done.location or "")

    def load_table(self, identifier: str | Identifier) -> Table:
        ref, name = _split(identifier)
        with _translated():
            state = self.engine.load_table(ref, name)
        return self._table(identifier, state.raw, state.location)

    def table_exists(self, identifier: str | Identifier) -> bool:
        ref, name = _split(identifier)
        with _translated():
            return self.engine.table_exists(ref, name)

    def register_table(
        self, identifier: str | Identifier, metadata_location: str, overwrite: bool = False
    ) -> Table:
        ref, name = _split(identifier)
        with _translated():
            done = self.engine.register_table(ref, name, metadata_location, overwrite=overwrite)
        return self._table(identifier, done.raw, done.location or "")

    def commit_table(
        self,
        table: Table,
        requirements: tuple[TableRequirement, ...],
        updates: tuple[TableUpdate, ...],
    ) -> CommitTableResponse:
        ref, name = _split(table.name())
        with _translated():
            done = self.engine.commit_table(ref, name, requirements, updates)
        return CommitTableResponse(
            metadata=TableMetadataUtil.parse_raw(done.raw.decode()),
            metadata_location=done.location or "",  # type: ignore[call-arg]
        )

    def drop_table(self, identifier: str | Identifier) -> None:
        ref, name = _split(identifier)
        with _translated():
            self.engine.drop_table(ref, name)

    def purge_table(self, identifier: str | Identifier) -> None:
        ref, name = _split(identifier)
        with _translated():
            self.engine.drop_table(ref, name, purge=True)

    def rename_table(
        self, from_identifier: str | Identifier, to_identifier: str | Identifier
    ) -> Table:
        ref, source = _split(from_identifier)
        to_ref, dest = _split(to_identifier)
        if to_ref != ref:
            raise ValueError("a table is renamed within its ref")
        with _translated():
            self.engine.rename_table(ref, source, dest)
        return self.load_table(to_identifier)

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        ref, *levels = self.identifier_to_tuple(namespace)
        with _translated():
            names = self.engine.list_tables(ref, levels)
        return [(ref, *n.namespace, n.name) for n in names]

    # --- namespaces -----------------------------------------------------------------------------

    def create_namespace(
        self, namespace: str | Identifier, properties: Properties = EMPTY_DICT
    ) -> None:
        ref, *levels = self.identifier_to_tuple(namespace)
        with _translated(namespace=True):
            self.engine.create_namespace(ref, levels, properties)

    def drop_namespace(self, namespace: str | Identifier) -> None:
        ref, *levels = self.identifier_to_tuple(namespace)
        with _translated():
            self.engine.drop_namespace(ref, levels)

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        parts = self.identifier_to_tuple(namespace)
        if not parts:
            return [(b.name,) for b in list_branches(self.repository)]
        with _translated():
            return [(parts[0], *n) for n in self.engine.list_namespaces(parts[0], parts[1:])]

    def load_namespace_properties(self, namespace: str | Identifier) -> Properties:
        ref, *levels = self.identifier_to_tuple(namespace)
        with _translated():
            return self.engine.load_namespace(ref, levels)

    def update_namespace_properties(
        self,
        namespace: str | Identifier,
        removals: set[str] | None = None,
        updates: Properties = EMPTY_DICT,
    ) -> Any:
        from pyiceberg.catalog import PropertiesUpdateSummary

        ref, *levels = self.identifier_to_tuple(namespace)
        with _translated():
            updated, removed, missing = self.engine.update_namespace(
                ref, levels, sorted(removals or ()), updates
            )
        return PropertiesUpdateSummary(removed=removed, updated=updated, missing=missing)

    # --- views (not supported) ------------------------------------------------------------------

    def list_views(self, namespace: str | Identifier) -> list[Identifier]:
        return []

    def view_exists(self, identifier: str | Identifier) -> bool:
        return False

    def load_view(self, identifier: str | Identifier) -> Any:
        raise NotImplementedError("graveler's Iceberg catalog has no views")

    def drop_view(self, identifier: str | Identifier) -> None:
        raise NotImplementedError("graveler's Iceberg catalog has no views")

    def register_view(self, identifier: str | Identifier, metadata_location: str) -> Any:
        raise NotImplementedError("graveler's Iceberg catalog has no views")

    # --- helpers --------------------------------------------------------------------------------

    def _resolve_table_location(
        self, location: str | None, database_name: str, table_name: str
    ) -> str:
        import uuid

        namespace = self.repository.info.storage_namespace
        return (location or "").rstrip("/") or location_for(namespace, str(uuid.uuid4()))

    def _create_staged_table(
        self,
        identifier: str | Identifier,
        schema: Schema | Any,
        location: str | None = None,
        partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
        sort_order: SortOrder = UNSORTED_SORT_ORDER,
        properties: Properties = EMPTY_DICT,
    ) -> StagedTable:
        """The metadata of a table to create in a transaction (committed with
        ``assert-create``)."""
        ref, name = _split(identifier)
        fmt = int(properties.get("format-version", 2))
        with _translated():
            done = self.engine.create_table(
                ref,
                name,
                self._convert_schema_if_needed(schema, fmt),  # type: ignore[arg-type]
                spec=partition_spec,
                order=sort_order,
                location=location,
                properties=properties,
                stage=True,
            )
        metadata = TableMetadataUtil.parse_raw(done.raw.decode())
        return StagedTable(
            identifier=self.identifier_to_tuple(identifier),
            metadata=metadata,
            metadata_location=f"{metadata.location}/metadata/staged.metadata.json",
            io=self._load_file_io(metadata.properties, metadata.location),
            catalog=self,
        )

    def _table(self, identifier: str | Identifier, raw: bytes, location: str) -> Table:
        metadata = TableMetadataUtil.parse_raw(raw.decode())
        return Table(
            identifier=self.identifier_to_tuple(identifier),
            metadata=metadata,
            metadata_location=location,
            io=self._load_file_io(metadata.properties, location),
            catalog=self,
        )


def _split(identifier: str | Identifier) -> tuple[str, TableName]:
    parts = MetastoreCatalog.identifier_to_tuple(identifier)
    if len(parts) < 2:
        raise NoSuchTableError(f"{'.'.join(parts)!r} names no table: use REF.NAMESPACE.TABLE")
    return parts[0], TableName.of(parts[1:-1], parts[-1])


@contextmanager
def _translated(*, namespace: bool = False) -> Iterator[None]:
    """graveler's errors as pyiceberg's."""
    try:
        yield
    except TableNotFound as exc:
        raise NoSuchTableError(str(exc)) from exc
    except TableNamespaceNotFound as exc:
        raise NoSuchNamespaceError(str(exc)) from exc
    except TableNamespaceNotEmpty as exc:
        raise NamespaceNotEmptyError(str(exc)) from exc
    except TableCommitFailed as exc:
        raise CommitFailedException(str(exc)) from exc
    except AlreadyExists as exc:
        raise (NamespaceAlreadyExistsError if namespace else TableAlreadyExistsError)(
            str(exc)
        ) from exc
