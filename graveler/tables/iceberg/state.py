"""Reading Iceberg tables and namespaces as a commit has them.

Every read here is at a commit ID (a branch is read at its head commit), so a caller sees
one consistent state; :mod:`graveler.tables.iceberg.commit` writes by compare-and-swap on
the branch from the head it read.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from graveler.core.errors import (
    CorruptFile,
    InvalidArgument,
    ReadOnlyRef,
    TableNamespaceNotFound,
    TableNotFound,
)
from graveler.core.model import Branch, Commit
from graveler.storage.entry import ObjectEntry
from graveler.tables.iceberg import jsonio
from graveler.tables.iceberg.names import NAMESPACE_MARKER, POINTER, TableName, folder, marker_key
from graveler.views.context import RepoContext
from graveler.views.reads import iter_objects, list_objects, read_entry, stat_many

MAX_PROPERTIES_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class RefAt:
    """A ref as the catalog reads it: its commit, and the branch when the ref is a plain
    branch name (the only kind that takes writes)."""

    ref: str
    commit: Commit
    branch: Branch | None

    def writable(self) -> Branch:
        if self.branch is None:
            raise ReadOnlyRef(
                f"{self.ref!r} is not a branch: tables at tags and commits are read-only"
            )
        return self.branch


def resolve_ref(repo: RepoContext, ref: str) -> RefAt:
    """``ref`` (a branch, tag, commit ID or ref expression) at its committed state; a plain
    branch name reads its head commit. Raises InvalidRef, RefNotFound."""
    if not isinstance(ref, str) or not ref:
        raise InvalidArgument("the first namespace level must name a ref")
    resolved = repo.resolve(ref)
    branch = resolved.branch if resolved.view is None else None
    return RefAt(ref, resolved.commit, branch)


@dataclass(frozen=True)
class TableState:
    """A table at a commit: its pointer entry and the metadata file it names."""

    name: TableName
    commit_id: str
    entry: ObjectEntry
    location: str  # the metadata file's URI
    raw: bytes = field(repr=False)

    @functools.cached_property
    def doc(self) -> dict[str, Any]:
        """The metadata JSON as a dict (parsed once)."""
        try:
            value = jsonio.loads(self.raw)
        except ValueError as exc:
            raise CorruptFile(f"table {self.name}: metadata {self.location} is not JSON") from exc
        if not isinstance(value, dict):
            raise CorruptFile(f"table {self.name}: metadata {self.location} is not an object")
        return value

    @functools.cached_property
    def metadata(self) -> Any:
        """The metadata as pyiceberg's model."""
        from pyiceberg.table.metadata import TableMetadataUtil

        return TableMetadataUtil.parse_raw(self.raw.decode())


def uri_of(repo: RepoContext, entry: ObjectEntry) -> str:
    return f"{repo.info.storage_namespace.rstrip('/')}/{entry.physical_address}"


def read_table(repo: RepoContext, commit_id: str, name: TableName) -> TableState | None:
    """The table ``name`` at ``commit_id``, or None."""
    entry = stat_many(repo, commit_id, [name.pointer])[0]
    if entry is None:
        return None
    return TableState(name, commit_id, entry, uri_of(repo, entry), read_entry(repo, entry))


def require_table(repo: RepoContext, at: RefAt, name: TableName) -> TableState:
    state = read_table(repo, at.commit.id, name)
    if state is None:
        why = "" if namespace_exists(repo, at.commit.id, name.namespace) else " (no namespace)"
        raise TableNotFound(f"table {name} does not exist at {at.ref!r}{why}")
    return state


def namespace_exists(repo: RepoContext, commit_id: str, levels: tuple[str, ...]) -> bool:
    return not levels or stat_many(repo, commit_id, [marker_key(levels)])[0] is not None


def require_namespace(repo: RepoContext, at: RefAt, levels: tuple[str, ...]) -> None:
    if not namespace_exists(repo, at.commit.id, levels):
        shown = ".".join(levels)
        raise TableNamespaceNotFound(f"namespace {shown!r} does not exist at {at.ref!r}")


def namespace_properties(repo: RepoContext, at: RefAt, levels: tuple[str, ...]) -> dict[str, str]:
    """A namespace's properties (the ref level's describe the ref)."""
    if not levels:
        props = {"graveler.commit": at.commit.id}
        if at.branch is not None:
            props["graveler.branch"] = at.branch.name
        return props
    entry = stat_many(repo, at.commit.id, [marker_key(levels)])[0]
    if entry is None:
        require_namespace(repo, at, levels)
        raise AssertionError("unreachable")
    return decode_properties(read_entry(repo, entry), marker_key(levels))


def decode_properties(data: bytes, key: str) -> dict[str, str]:
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise CorruptFile(f"namespace marker {key!r} is not JSON") from exc
    props = doc.get("properties") if isinstance(doc, dict) else None
    if not isinstance(props, dict):
        raise CorruptFile(f"namespace marker {key!r} has no properties object")
    return {str(k): str(v) for k, v in props.items()}


def encode_properties(props: dict[str, str]) -> bytes:
    data = json.dumps({"properties": props}, sort_keys=True, indent=1).encode()
    if len(data) > MAX_PROPERTIES_BYTES:
        raise InvalidArgument(f"namespace properties exceed {MAX_PROPERTIES_BYTES} bytes")
    return data


def children(
    repo: RepoContext, commit_id: str, levels: tuple[str, ...]
) -> tuple[list[str], list[str]]:
    """The child namespaces and the tables directly under a namespace, each sorted."""
    spaces: list[str] = []
    tables: list[str] = []
    prefixes = list(_child_folders(repo, commit_id, folder(levels)))
    for start in range(0, len(prefixes), 500):
        chunk = prefixes[start : start + 500]
        keys = [k for p in chunk for k in (p + NAMESPACE_MARKER, p + POINTER)]
        found = stat_many(repo, commit_id, keys)
        for i, prefix in enumerate(chunk):
            child = prefix[:-1].rsplit("/", 1)[-1]
            if found[2 * i] is not None:
                spaces.append(child)
            elif found[2 * i + 1] is not None:
                tables.append(child)
    return spaces, tables


def _child_folders(repo: RepoContext, commit_id: str, prefix: str) -> Iterator[str]:
    after = ""
    while True:
        page = list_objects(repo, commit_id, prefix, delimiter="/", after=after, amount=1000)
        yield from page.common_prefixes
        if page.next_after is None:
            return
        after = page.next_after


def entries_under(repo: RepoContext, commit_id: str, root: str) -> Iterator[ObjectEntry]:
    """Every entry under a table's root at ``commit_id``."""
    return iter_objects(repo, commit_id, prefix=root)
