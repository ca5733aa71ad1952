"""Storage namespaces: one spelling per location, and one repository per location.

**Canonical URIs.** :func:`canonical_namespace` gives every location one spelling:

* ``file://``: the resolved absolute path (``//``, ``/./``, ``..`` and symbolic links resolved,
  a ``localhost`` host dropped), percent-encoded as :meth:`pathlib.Path.as_uri` does; a plain
  path (absolute or relative to the working directory) is accepted too;
* ``s3://bucket/key/prefix``: empty key components dropped (``s3://b//x`` is ``s3://b/x``), no
  trailing ``/``; ``.`` and ``..`` components are refused (S3 keeps them literally);
* ``mem://name``: without trailing ``/``. Memory stores are separate by name, never nested.

**Ownership.** A repository claims its namespace with a marker object, :data:`MARKER_KEY`,
written create-if-absent (:meth:`~graveler.storage.objectstore.port.ObjectStore.put_if_absent`),
naming it by name and creation time (together they identify it across refs databases; a refs
restore keeps both). :func:`check_free` refuses a new repository that would share, nest in or
contain another's namespace (same refs database, or metadata found in the store at, above or
below it); :func:`claim_new` and :func:`claim_on_open` write the marker on creation and on a
client's first open; :func:`require_owner` guards garbage collection and fsck. The whole
model, with its limits, is in ``docs/security.md``.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from graveler.core import validate
from graveler.core.config import redact_url
from graveler.core.errors import (
    AlreadyExists,
    CorruptFile,
    GravelerError,
    InvalidArgument,
    InvalidURI,
    NamespaceInUse,
    ObjectNotFound,
    StorageError,
)
from graveler.core.model import Repository as RepositoryInfo
from graveler.storage.committed.files import TREE_PREFIX
from graveler.storage.objectstore.port import ObjectStore
from graveler.storage.refs.port import RefStore

#: Opens the object store of a namespace URI (``Graveler.object_store``).
OpenStore = Callable[[str], ObjectStore]

#: The ownership marker, relative to the namespace.
MARKER_KEY = TREE_PREFIX + "repository.json"
MARKER_FORMAT = 1
#: How many existing objects :func:`check_free` looks through below a new namespace.
SCAN_LIMIT = 10_000


# --- canonical locations -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Location:
    """A canonical namespace: scheme, authority (bucket or memory store name) and path parts."""

    scheme: str  # "file" | "s3" | "mem"
    authority: str  # "" for file
    parts: tuple[str, ...]

    @property
    def uri(self) -> str:
        if self.scheme == "file":
            return Path("/" + "/".join(self.parts)).as_uri()
        if self.scheme == "s3":
            return f"s3://{self.authority}" + (
                "/" + quote("/".join(self.parts)) if self.parts else ""
            )
        return f"mem://{self.authority}"

    def contains(self, other: Location) -> bool:
        """Whether ``other`` is this location or lies inside it."""
        if (self.scheme, self.authority) != (other.scheme, other.authority):
            return False
        return other.parts[: len(self.parts)] == self.parts

    def ancestors(self) -> list[Location]:
        """The enclosing locations, nearest first (none for a memory store)."""
        if self.scheme == "mem":
            return []
        return [
            Location(self.scheme, self.authority, self.parts[:n])
            for n in reversed(range(len(self.parts)))
        ]

    @property
    def root_uri(self) -> str:
        """The outermost location of this store: the file system root, the bucket, or the
        memory store itself."""
        return Location(self.scheme, self.authority, ()).uri

    @property
    def key_prefix(self) -> str:
        """This location as a key prefix below :attr:`root_uri` (``""`` at the root)."""
        return "".join(part + "/" for part in self.parts)


def location(uri: str) -> Location:
    """The canonical location of a namespace URI or path; InvalidURI / InvalidArgument for one
    graveler cannot store objects in."""
    if not isinstance(uri, str) or not validate.text(uri, "storage namespace"):
        raise InvalidArgument("storage namespace must be a non-empty URI or path")
    if "://" not in uri:
        return _file_location(os.path.abspath(uri), uri)
    if uri.startswith("file://"):
        parts = urlsplit(uri)
        if parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
            raise InvalidURI(f"file URI {uri!r} must look like file:///absolute/path")
        return _file_location(unquote(parts.path), uri)
    if uri.startswith("s3://"):
        return _s3_location(uri)
    if uri.startswith("mem://"):
        name = uri[len("mem://") :].rstrip("/")
        if not name:
            raise InvalidURI(f"memory URI {uri!r} needs a name: mem://name")
        return Location("mem", name, ())
    raise InvalidArgument(f"unsupported storage namespace {uri!r}: use file://, s3:// or mem://")


def canonical_namespace(uri: str) -> str:
    """The one spelling of the namespace ``uri`` names (see the module docstring)."""
    return location(uri).uri


def _file_location(path: str, given: str) -> Location:
    if not path.startswith("/"):
        raise InvalidURI(f"file URI {given!r} must hold an absolute path")
    real = os.path.realpath(path)
    return Location("file", "", tuple(p for p in real.split("/") if p))


def _s3_location(uri: str) -> Location:
    parts = urlsplit(uri)
    if not parts.netloc or parts.query or parts.fragment:
        raise InvalidURI(f"S3 URI {uri!r} must look like s3://bucket/optional/prefix")
    keys = tuple(p for p in unquote(parts.path).split("/") if p)
    if any(p in (".", "..") for p in keys):
        raise InvalidURI(f"S3 URI {uri!r} has a '.' or '..' key component")
    return Location("s3", parts.netloc, keys)


def relation(new: Location, other: Location) -> str | None:
    """How ``new`` overlaps ``other``, in words, or None when they are apart."""
    if new == other:
        return "is"
    if other.contains(new):
        return "lies inside"
    if new.contains(other):
        return "contains"
    return None


def relation_to(new: Location, stored: str) -> str | None:
    """:func:`relation` to a namespace as stored in the refs database (perhaps spelled by an
    older version; compared as text when it cannot be parsed any more)."""
    try:
        return relation(new, location(stored))
    except GravelerError:
        return "is" if stored.rstrip("/") == new.uri else None


# --- the marker ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Claim:
    """What a marker says: which repository owns the namespace."""

    repository: str
    created: str  # ISO 8601, UTC, microseconds
    database: str  # refs database URL, password hidden; for people only

    @classmethod
    def of(cls, info: RepositoryInfo, database_url: str) -> Claim:
        return cls(info.name, _iso(info.creation_date), redact_url(database_url))

    def names(self, info: RepositoryInfo) -> bool:
        """Whether the marker names this repository (same name and creation time)."""
        return self.repository == info.name and self.created == _iso(info.creation_date)

    def describe(self) -> str:
        where = f"created {self.created}, refs database {self.database}"
        return f"repository {self.repository!r} ({where})"

    def encode(self) -> bytes:
        doc = {"format": MARKER_FORMAT, "repository": self.repository, "created": self.created}
        doc["database"] = self.database
        doc["claimed"] = _iso(datetime.now(UTC))
        return json.dumps(doc, sort_keys=True, indent=1).encode() + b"\n"


def read_claim(store: ObjectStore, key: str = MARKER_KEY) -> Claim | None:
    """The claim of the marker at ``key`` of ``store``; None when there is none; CorruptFile
    when it cannot be read (then nobody can tell whose the namespace is)."""
    try:
        data = store.get(key)
    except ObjectNotFound:
        return None
    try:
        doc = json.loads(data)
        if doc.get("format") != MARKER_FORMAT:
            raise ValueError(f"unknown format {doc.get('format')!r}")
        return Claim(str(doc["repository"]), str(doc["created"]), str(doc.get("database", "?")))
    except (ValueError, KeyError, AttributeError, TypeError) as exc:
        raise CorruptFile(
            f"the ownership marker {store.uri}/{key} is unreadable ({exc}); if no repository "
            "uses that namespace any more, delete the marker"
        ) from None


def claim(store: ObjectStore, info: RepositoryInfo, database_url: str) -> None:
    """Make sure the marker of ``store`` names ``info``'s repository: read it, write it when
    absent (create-if-absent: of racing claimants one wins, the others read its marker);
    NamespaceInUse when it names another. A marker already there costs a read, no write."""
    mine = Claim.of(info, database_url)
    for _ in range(2):  # a second look if another claimant wrote between our read and write
        theirs = read_claim(store)
        if theirs is None:
            if store.put_if_absent(MARKER_KEY, mine.encode()):
                return
            continue
        if not theirs.names(info):
            raise NamespaceInUse(
                f"storage namespace {info.storage_namespace} is claimed by "
                f"{theirs.describe()}, not by repository {info.name!r}: {_REMEDY}"
            )
        return
    raise StorageError(f"cannot claim {store.uri}: its ownership marker keeps vanishing")


_REMEDY = (
    "a repository owns its namespace alone (garbage collection of one would delete the "
    "other's objects). Use another location; if that repository was deleted and its data is "
    f"not wanted, remove {MARKER_KEY} from the namespace"
)


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="microseconds")


# --- creating, opening, collecting ---------------------------------------------------------------


def check_free(
    refs: RefStore,
    open_store: OpenStore,
    name: str,
    namespace: str,
    *,
    restoring: RepositoryInfo | None = None,
) -> None:
    """Refuse (NamespaceInUse) a repository ``name`` on ``namespace`` (canonical) that would
    share, nest in or contain the namespace of another repository of ``refs``, or of one whose
    metadata is in the store; AlreadyExists when ``name`` is taken. ``restoring``: the
    repository a refs restore brings back, whose own marker and metadata at ``namespace`` are
    expected (its contents are not scanned)."""
    here = location(namespace)
    for other in refs.list_repositories():
        if other.name == name:
            raise AlreadyExists(f"repository {name!r} already exists")
        how = relation_to(here, other.storage_namespace)
        if how:
            raise NamespaceInUse(
                f"storage namespace {here.uri} {how} the namespace {other.storage_namespace} "
                f"of repository {other.name!r}: {_REMEDY}"
            )
    try:
        _check_marked(open_store, here, restoring)
    except NamespaceInUse:
        # A concurrent creation of the same repository (another process: its row, then its
        # marker and files) may have landed since the list above: that is AlreadyExists.
        if any(other.name == name for other in refs.list_repositories()):
            raise AlreadyExists(f"repository {name!r} already exists") from None
        raise
    if restoring is None:
        _check_below(open_store(here.uri), here)


def _check_marked(open_store: OpenStore, here: Location, restoring: RepositoryInfo | None) -> None:
    """Graveler metadata at ``here`` or at one of its ancestors belongs to another repository."""
    root = open_store(here.root_uri) if here.scheme != "mem" else None
    for place in [here, *here.ancestors()]:
        store, prefix = (root, place.key_prefix) if root is not None else (open_store(here.uri), "")
        if next(iter(store.list(prefix + TREE_PREFIX)), None) is None:
            continue
        theirs = read_claim(store, prefix + MARKER_KEY)
        if place == here and restoring is not None and (theirs is None or theirs.names(restoring)):
            continue
        owner = theirs.describe() if theirs else "a repository made before ownership markers"
        how = "is" if place == here else "lies inside"
        raise NamespaceInUse(
            f"storage namespace {here.uri} {how} {place.uri}, used by {owner}: {_REMEDY}"
        )


def _check_below(store: ObjectStore, here: Location) -> None:
    """Graveler metadata below ``here`` (another repository nested in it)."""
    if here.scheme == "mem":
        return
    for seen, info in enumerate(store.list(""), 1):
        if seen > SCAN_LIMIT:
            raise InvalidArgument(
                f"storage namespace {here.uri} already holds more than {SCAN_LIMIT} objects, "
                "so graveler cannot check that no other repository lives inside it; use a new "
                "or empty location"
            )
        nested = nested_namespace(info.key)
        if nested is not None:
            theirs = read_claim(store, nested + MARKER_KEY)
            owner = theirs.describe() if theirs else "a repository made before ownership markers"
            raise NamespaceInUse(
                f"storage namespace {here.uri} contains {here.uri}/{nested.rstrip('/')}, used "
                f"by {owner}: {_REMEDY}"
            )


def nested_namespace(key: str) -> str | None:
    """The key prefix (ending with ``/``) of a namespace nested below the store root that
    ``key`` belongs to graveler metadata of, else None (``a/b/_graveler/x`` -> ``a/b/``)."""
    cut = key.find("/" + TREE_PREFIX)
    return key[: cut + 1] if cut >= 0 else None


def claim_new(refs: RefStore, store: ObjectStore, info: RepositoryInfo, database: str) -> None:
    """Claim a just-created repository's namespace; when the claim is lost (or cannot be
    written) the repository row is deleted again and the error raised."""
    try:
        claim(store, info, database)
    except GravelerError:
        refs.delete_repository(info.name)
        raise
    _remember(store, info)


#: Per store object (so per client and namespace): the repositories whose claim was checked.
_opened: weakref.WeakKeyDictionary[ObjectStore, set[tuple[str, str]]] = weakref.WeakKeyDictionary()
_opened_lock = threading.Lock()


def _remember(store: ObjectStore, info: RepositoryInfo) -> None:
    with _opened_lock:
        _opened.setdefault(store, set()).add((info.name, _iso(info.creation_date)))


def claim_on_open(store: ObjectStore, info: RepositoryInfo, database: str) -> None:
    """On the first open of a repository through ``store``: write its marker when there is
    none (a repository created before markers existed), NamespaceInUse when the marker names
    another repository. A store that cannot be written or read (read-only credentials) is
    left alone: the next open tries again, and GC and fsck insist (:func:`require_owner`)."""
    with _opened_lock:
        if (info.name, _iso(info.creation_date)) in _opened.get(store, ()):
            return
    try:
        claim(store, info, database)
    except (StorageError, CorruptFile):
        return
    _remember(store, info)


def require_owner(refs: RefStore, store: ObjectStore, info: RepositoryInfo, action: str) -> None:
    """Refuse ``action`` (garbage collection, fsck) unless the repository ``info`` owns its
    namespace alone: the marker in ``store`` (written now if missing) names it and no other
    repository of ``refs`` overlaps it. NamespaceInUse otherwise."""
    try:
        here = location(info.storage_namespace)
    except GravelerError:
        here = None
    for other in refs.list_repositories():
        how = relation_to(here, other.storage_namespace) if here else None
        if other.name != info.name and how:
            raise NamespaceInUse(
                f"{action} refuses to run on {info.storage_namespace}: it {how} the namespace "
                f"{other.storage_namespace} of repository {other.name!r} (same refs database)"
            )
    try:
        claim(store, info, "(not recorded: claimed by garbage collection or fsck)")
    except NamespaceInUse as exc:
        raise NamespaceInUse(f"{action} refuses to run: {exc}") from None


def refuse_nested_listing(namespace: str, key: str) -> None:
    """NamespaceInUse when ``key``, listed by garbage collection under ``data/``, is graveler
    metadata of another repository nested inside this namespace."""
    nested = nested_namespace(key)
    if nested is not None:
        raise NamespaceInUse(
            f"garbage collection refuses to run on {namespace}: "
            f"{namespace.rstrip('/')}/{nested.rstrip('/')} holds another repository's "
            "metadata, whose objects it would delete"
        )
