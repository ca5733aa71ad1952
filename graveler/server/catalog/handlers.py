"""The Iceberg REST catalog's operations, as plain functions of one authenticated call.

Each handler gets a :class:`Call` (the repository named by the URL's prefix, the caller,
the path parameters, the JSON body) and returns ``(status, body)``; it runs on a worker
thread, so it may block on the database and the object store. Request bodies are parsed
with pyiceberg's models of the spec (a malformed body is a 400), and the work is done by
:class:`graveler.tables.iceberg.catalog.IcebergCatalog`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter
from pyiceberg.catalog.rest import CreateTableRequest, RegisterTableRequest
from pyiceberg.table import CommitTableRequest

from graveler.core.errors import InvalidArgument, NotFound, TableNotFound
from graveler.repository import Repository
from graveler.server.auth import Principal
from graveler.server.catalog.errors import RestError
from graveler.tables.iceberg.catalog import IcebergCatalog, TableResult
from graveler.tables.iceberg.names import TableName

Reply = tuple[int, bytes | dict[str, Any] | None]
MAX_BODY = 64 << 20


@dataclass
class Call:
    """One request, authenticated, on the repository its URL names."""

    repo: Repository
    principal: Principal
    params: dict[str, str]
    query: dict[str, str]
    raw: bytes = b""
    table_config: dict[str, str] = field(default_factory=dict)

    @property
    def catalog(self) -> IcebergCatalog:
        return IcebergCatalog(self.repo, committer=self.principal.access_key_id)

    def json(self) -> Any:
        try:
            return json.loads(self.raw or b"null")
        except ValueError:
            raise RestError(400, "BadRequestException", "the request body is not JSON") from None

    def namespace(self) -> tuple[str, list[str]]:
        """(ref, levels below it) of the ``namespace`` path parameter."""
        return split_namespace(self.params["namespace"].split("\x1f"))

    def table(self) -> tuple[str, TableName]:
        ref, levels = self.namespace()
        return ref, TableName.of(levels, self.params["table"])


@contextmanager
def table_route() -> Iterator[None]:
    """On a table's own routes a missing ref or namespace is a missing table (as Iceberg's
    catalogs answer: clients such as Spark fall back to metadata tables on it)."""
    try:
        yield
    except TableNotFound:
        raise
    except NotFound as exc:
        raise TableNotFound(str(exc)) from exc


def split_namespace(parts: list[str]) -> tuple[str, list[str]]:
    if not parts or not all(isinstance(p, str) and p for p in parts):
        raise InvalidArgument("a namespace starts with a ref: REF[.NAMESPACE...]")
    return parts[0], list(parts[1:])


def identifier(ref: str, name: TableName) -> dict[str, Any]:
    return {"namespace": [ref, *name.namespace], "name": name.name}


def table_body(result: TableResult, config: dict[str, str]) -> bytes:
    """A LoadTableResult, with the metadata spliced in as the catalog stored it."""
    head = {"metadata-location": result.location, "config": config}
    return json.dumps(head).encode()[:-1] + b',"metadata":' + result.raw + b"}"


# --- namespaces -------------------------------------------------------------------------------


def list_namespaces(call: Call) -> Reply:
    parent = call.query.get("parent", "")
    if not parent:
        branches = call.repo.list_branches()
        return 200, {"namespaces": [[b.name] for b in branches]}
    ref, levels = split_namespace(parent.replace("%1F", "\x1f").split("\x1f"))
    found = call.catalog.list_namespaces(ref, levels)
    return 200, {"namespaces": [[ref, *n] for n in found]}


def create_namespace(call: Call) -> Reply:
    doc = call.json()
    if not isinstance(doc, dict) or not isinstance(doc.get("namespace"), list):
        raise InvalidArgument("a namespace to create is a list of names")
    ref, levels = split_namespace(doc["namespace"])
    props = call.catalog.create_namespace(ref, levels, doc.get("properties") or {})
    return 200, {"namespace": [ref, *levels], "properties": props}


def load_namespace(call: Call) -> Reply:
    ref, levels = call.namespace()
    props = call.catalog.load_namespace(ref, levels)
    return 200, {"namespace": [ref, *levels], "properties": props}


def namespace_exists(call: Call) -> Reply:
    ref, levels = call.namespace()
    call.catalog.load_namespace(ref, levels)
    return 204, None


def drop_namespace(call: Call) -> Reply:
    ref, levels = call.namespace()
    call.catalog.drop_namespace(ref, levels)
    return 204, None


def update_properties(call: Call) -> Reply:
    ref, levels = call.namespace()
    doc = call.json()
    if not isinstance(doc, dict):
        raise InvalidArgument("expected an object with removals and updates")
    removals, updates = doc.get("removals") or [], doc.get("updates") or {}
    if not isinstance(removals, list) or not isinstance(updates, dict):
        raise InvalidArgument("removals is a list of names, updates an object")
    both = sorted(set(removals) & set(updates))
    if both:
        raise RestError(422, "UnprocessableEntityException", f"set and removed: {both}")
    updated, removed, missing = call.catalog.update_namespace(ref, levels, removals, updates)
    return 200, {"updated": updated, "removed": removed, "missing": missing}


# --- tables -----------------------------------------------------------------------------------


def list_tables(call: Call) -> Reply:
    ref, levels = call.namespace()
    names = call.catalog.list_tables(ref, levels)
    return 200, {"identifiers": [identifier(ref, n) for n in names]}


def create_table(call: Call) -> Reply:
    ref, levels = call.namespace()
    doc = call.json()
    if not isinstance(doc, dict):
        raise InvalidArgument("expected a CreateTableRequest object")
    for optional in ("location", "partition-spec", "write-order"):
        doc.setdefault(optional, None)
    request = CreateTableRequest.model_validate(doc)
    name = TableName.of(levels, request.name)
    done = call.catalog.create_table(
        ref,
        name,
        request.table_schema,
        spec=request.partition_spec,
        order=request.write_order,
        location=request.location,
        properties=request.properties,
        stage=request.stage_create,
    )
    return 200, table_body(done, call.table_config)


def load_table(call: Call) -> Reply:
    with table_route():
        ref, name = call.table()
        state = call.catalog.load_table(ref, name)
        result = TableResult(state.location, state.raw, state.commit_id)
        return 200, table_body(result, call.table_config)


def table_exists(call: Call) -> Reply:
    with table_route():
        ref, name = call.table()
        call.catalog.load_table(ref, name)
        return 204, None


def commit_table(call: Call) -> Reply:
    with table_route():
        ref, name = call.table()
        request = _commit_request(call.raw)
        done = call.catalog.commit_table(ref, name, request.requirements, request.updates)
        return 200, {"metadata-location": done.location, "metadata": json.loads(done.raw)}


def drop_table(call: Call) -> Reply:
    with table_route():
        ref, name = call.table()
        purge = call.query.get("purgeRequested", "false").lower() == "true"
        call.catalog.drop_table(ref, name, purge=purge)
        return 204, None


def register_table(call: Call) -> Reply:
    ref, levels = call.namespace()
    doc = call.json()
    if isinstance(doc, dict):
        doc.setdefault("overwrite", False)
    request = RegisterTableRequest.model_validate(doc)
    name = TableName.of(levels, request.name)
    done = call.catalog.register_table(
        ref, name, request.metadata_location, overwrite=request.overwrite
    )
    return 200, table_body(done, call.table_config)


def rename_table(call: Call) -> Reply:
    doc = call.json()
    if not isinstance(doc, dict):
        raise InvalidArgument("expected source and destination identifiers")
    ref, source = _identifier(doc.get("source"))
    to_ref, dest = _identifier(doc.get("destination"))
    if to_ref != ref:
        raise RestError(406, "UnsupportedOperationException", "a table is renamed within its ref")
    call.catalog.rename_table(ref, source, dest)
    return 204, None


def commit_transaction(call: Call) -> Reply:
    doc = call.json()
    changes = doc.get("table-changes") if isinstance(doc, dict) else None
    if not isinstance(changes, list) or not changes:
        raise InvalidArgument("a transaction lists its table-changes")
    requests = [_commit_request(json.dumps(c).encode()) for c in changes]
    named = [(_identifier(r.identifier.model_dump()), r) for r in requests]
    refs = {ref for (ref, _), _ in named}
    if len(refs) != 1:
        raise RestError(406, "UnsupportedOperationException", "a transaction spans one ref")
    items = [(name, r.requirements, r.updates) for (_, name), r in named]
    call.catalog.commit_tables(refs.pop(), items)
    return 204, None


def report_metrics(call: Call) -> Reply:
    with table_route():
        call.table()
        return 204, None


def _commit_request(raw: bytes) -> Any:
    return TypeAdapter(CommitTableRequest).validate_json(_with_identifier(raw))


def _with_identifier(raw: bytes) -> bytes:
    """pyiceberg's model requires an identifier that single-table commits may leave out."""
    try:
        doc = json.loads(raw or b"{}")
    except ValueError:
        raise RestError(400, "BadRequestException", "the request body is not JSON") from None
    if isinstance(doc, dict) and doc.get("identifier") is None:
        doc["identifier"] = {"namespace": [], "name": "_"}
    return json.dumps(doc).encode()


def _identifier(doc: Any) -> tuple[str, TableName]:
    if not isinstance(doc, dict) or not isinstance(doc.get("namespace"), list):
        raise InvalidArgument("a table identifier has a namespace list and a name")
    ref, levels = split_namespace(doc["namespace"])
    return ref, TableName.of(levels, doc.get("name"))  # type: ignore[arg-type]
