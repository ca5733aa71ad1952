"""Where Iceberg tables live: in a ref's tree, and in the repository's storage namespace.

A table ``sales.orders`` of a ref is the folder ``sales/orders/`` of the ref's tree:

* ``sales/orders/metadata/current.metadata.json`` (:data:`POINTER`) is the table's current
  metadata file: an entry whose physical address is the metadata file the catalog wrote.
  A ref has the table exactly when this entry exists; merges find tables by it.
* every other file the metadata references (manifest lists, manifests, data and delete
  files, statistics) is an entry too, keyed by its path relative to the table's location
  (``sales/orders/data/p=1/x.parquet``), or by its namespace-relative address under
  ``_graveler_external/`` when it lies outside the location. So diff, the UI, GC and fsck
  see every file a table needs, and nothing else.

A namespace ``sales`` is the folder ``sales/`` holding :data:`NAMESPACE_MARKER` (its
properties, as JSON). The ref itself is the top namespace level and needs no marker.

Files are written once, at branch-independent physical locations under
``<storage namespace>/data/iceberg/<table-uuid>/`` (:func:`location_for`): a table written on
a run branch and merged stays readable after the branch is gone, and garbage collection,
which sweeps ``data/``, reclaims what no retained commit references.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graveler.core.errors import InvalidArgument, InvalidName
from graveler.storage.objects import DATA_PREFIX, normalize_address

POINTER = "metadata/current.metadata.json"
NAMESPACE_MARKER = ".iceberg-namespace.json"
EXTERNAL = "_graveler_external/"
#: Where new tables are located, relative to the storage namespace.
LOCATION_ROOT = DATA_PREFIX + "iceberg/"
#: Namespace levels and table names: ASCII letters, digits, ``_`` and ``-``, not starting
#: with ``-``; no ``.`` (Spark and Trino split identifiers on it) and no ``/``.
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
MAX_NAME = 255
MAX_DEPTH = 16


def check_name(name: object, what: str) -> str:
    """``name`` unchanged when it may name a namespace level or a table, else InvalidName."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or len(name) > MAX_NAME:
        raise InvalidName(
            f"invalid {what} {name!r:.80}: use 1-{MAX_NAME} ASCII letters, digits, '_' and "
            "'-', not starting with '-'"
        )
    return name


def check_levels(levels: tuple[str, ...] | list[str], what: str = "namespace") -> tuple[str, ...]:
    """Namespace levels below the ref, each checked."""
    if len(levels) > MAX_DEPTH:
        raise InvalidName(f"{what} {'.'.join(levels)[:200]!r} is deeper than {MAX_DEPTH} levels")
    return tuple(check_name(level, f"{what} level") for level in levels)


def folder(levels: tuple[str, ...]) -> str:
    """The tree folder of a namespace (``""`` for the ref itself, else ``"a/b/"``)."""
    return "".join(level + "/" for level in levels)


def marker_key(levels: tuple[str, ...]) -> str:
    """The key of a (non-ref) namespace's marker."""
    if not levels:
        raise InvalidArgument("the ref level of a namespace has no marker")
    return folder(levels) + NAMESPACE_MARKER


@dataclass(frozen=True, slots=True)
class TableName:
    """A table of a ref: ``namespace`` are the levels below the ref."""

    namespace: tuple[str, ...]
    name: str

    @classmethod
    def of(cls, namespace: tuple[str, ...] | list[str], name: str) -> TableName:
        return cls(check_levels(namespace), check_name(name, "table name"))

    @property
    def root(self) -> str:
        return folder(self.namespace) + self.name + "/"

    @property
    def pointer(self) -> str:
        return self.root + POINTER

    def __str__(self) -> str:
        return ".".join((*self.namespace, self.name))


def table_root(path: str) -> str | None:
    """The root of the table whose pointer ``path`` is, or None."""
    if path.endswith("/" + POINTER):
        return path[: -len(POINTER)]
    return None


def location_for(storage_namespace: str, table_uuid: str) -> str:
    """The default location of a new table (a URI inside the storage namespace)."""
    return f"{storage_namespace.rstrip('/')}/{LOCATION_ROOT}{table_uuid}"


def address_of(storage_namespace: str, uri: str) -> str:
    """The namespace-relative address of a file an Iceberg client names by URI. Hadoop's
    ``file:/path`` spelling is accepted for ``file:///path``. Refuses (InvalidArgument) any
    file outside the namespace's ``data/`` area, where graveler does not keep table files."""
    if not isinstance(uri, str) or not uri:
        raise InvalidArgument("a table file location is empty")
    if uri.startswith("file:/") and not uri.startswith("file://"):
        uri = "file://" + uri[len("file:") :]
    elif uri.startswith("file://localhost/"):
        uri = "file://" + uri[len("file://localhost") :]
    address = normalize_address(storage_namespace, uri)
    if not address.startswith(DATA_PREFIX):
        raise InvalidArgument(
            f"table file {uri!r} is outside {storage_namespace}/{DATA_PREFIX}, where this "
            "repository keeps table files"
        )
    return address


def location_address(storage_namespace: str, location: object) -> str:
    """The address of a table location: a folder inside the namespace's ``data/`` area
    (new tables get one under :data:`LOCATION_ROOT`)."""
    if not isinstance(location, str) or not location.strip("/"):
        raise InvalidArgument("a table needs a location")
    address = address_of(storage_namespace, location.rstrip("/"))
    if address.rstrip("/") + "/" in (DATA_PREFIX, LOCATION_ROOT):
        raise InvalidArgument(f"table location {location!r} is the data area itself")
    return address


def key_for(root: str, location: str, address: str) -> str:
    """The tree key of a referenced file: relative to the table's location address when it
    lies under it, else under :data:`EXTERNAL`."""
    base = location.rstrip("/") + "/"
    if address.startswith(base):
        key = root + address[len(base) :]
        if key != root + POINTER:
            return key
    return root + EXTERNAL + address
