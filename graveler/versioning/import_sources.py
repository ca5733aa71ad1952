"""What an import reads: its sources, each a prefix or a single object outside every storage
namespace, and the branch path each lands at.

* a **prefix** (``ImportSource.prefix("s3://bucket/raw/", "raw/")``): every object under a
  key prefix or a local directory, at the destination prefix plus its path below the source;
* an **object** (``ImportSource.object("s3://bucket/raw/a.csv", "tables/a.csv")``): one
  object, at exactly the destination path.

Sources are ``s3://bucket/...`` or ``file:///absolute/path``. :func:`checked` parses and checks
them before anything is read (a local directory or file must exist; S3 objects are read when
the import runs). None may lie in, or hold, the storage namespace of any repository of the
deployment: a namespace's objects belong to its repository and its garbage collector.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import unquote, urlsplit

from graveler.core import validate
from graveler.core.errors import InvalidArgument, InvalidURI, ObjectNotFound
from graveler.storage import namespaces
from graveler.storage.entry import ObjectEntry
from graveler.storage.external import file_address, s3_address
from graveler.storage.objectstore import ObjectStore, open_object_store, stored_sha256
from graveler.storage.objectstore.port import ObjectInfo
from graveler.versioning.writes import guess_type
from graveler.views.context import RepoContext


class ImportKind(StrEnum):
    """lakeFS's names for the two kinds of source."""

    PREFIX = "common_prefix"
    OBJECT = "object"


@dataclass(frozen=True, slots=True)
class ImportSource:
    """One source of an import and where it lands on the branch (see the module docstring)."""

    uri: str
    destination: str = ""
    kind: ImportKind = ImportKind.PREFIX

    @classmethod
    def prefix(cls, uri: str, destination: str = "") -> ImportSource:
        return cls(uri, destination, ImportKind.PREFIX)

    @classmethod
    def object(cls, uri: str, destination: str) -> ImportSource:
        return cls(uri, destination, ImportKind.OBJECT)


@dataclass(frozen=True, slots=True)
class Located:
    """A checked source: ``scheme`` ``file`` or ``s3``; ``path`` the absolute path (file) or
    the key (s3; a prefix ends with ``/`` unless it is empty); ``destination`` the branch
    prefix (ending with ``/``, or empty) or, for an object, the branch path."""

    kind: ImportKind
    scheme: str
    bucket: str
    path: str
    destination: str

    @property
    def uri(self) -> str:
        if self.scheme == "file":
            return file_address(self.path)
        return f"s3://{self.bucket}/{self.path}"

    def address(self, key: str) -> str:
        """The external address of ``key`` (relative to the source for a prefix)."""
        if self.scheme == "file":
            return file_address(os.path.join(self.path, key) if key else self.path)
        return s3_address(self.bucket, self.path + key)

    def replaces(self) -> bytes:
        """The branch key range this source replaces: its destination prefix, or its path."""
        return self.destination.encode()


def checked(repo: RepoContext, sources: Sequence[ImportSource]) -> list[Located]:
    """Every source parsed and checked, in order; raises InvalidURI or InvalidArgument (a bad
    URI, a missing local source, a bad destination, an overlap with a namespace, no source)."""
    if not sources:
        raise InvalidArgument("an import needs at least one source")
    found = [_located(s) for s in sources]
    stored = [(i.name, i.storage_namespace) for i in repo.refs.list_repositories()]
    for src in found:
        _check_outside_namespaces(src, stored)
    return found


def _located(source: object) -> Located:
    if not isinstance(source, ImportSource):
        raise InvalidArgument(f"an import source is an ImportSource, got {source!r:.60}")
    kind = ImportKind(source.kind)
    if kind is ImportKind.PREFIX:
        scheme, bucket, path = _prefix_location(source.uri)
        return Located(kind, scheme, bucket, path, _destination_prefix(source.destination))
    scheme, bucket, path = _object_location(source.uri)
    return Located(kind, scheme, bucket, path, _destination_path(source.destination))


def _prefix_location(uri: str) -> tuple[str, str, str]:
    scheme, bucket, path = _split(uri)
    if scheme == "file":
        real = os.path.realpath(path)
        if not os.path.isdir(real):
            raise InvalidURI(f"import source {uri!r} is not a directory")
        return scheme, "", real
    return scheme, bucket, path if not path or path.endswith("/") else path + "/"


def _object_location(uri: str) -> tuple[str, str, str]:
    scheme, bucket, path = _split(uri)
    if scheme == "file":
        real = os.path.realpath(path)
        if not os.path.isfile(real):
            raise InvalidURI(f"import source {uri!r} is not a file")
        return scheme, "", real
    if not path or path.endswith("/"):
        raise InvalidURI(f"import source {uri!r} names no object: s3://bucket/key")
    return scheme, bucket, path


def _split(uri: object) -> tuple[str, str, str]:
    if not isinstance(uri, str) or not uri:
        raise InvalidURI("an import needs a source URI: file:///path or s3://bucket/key")
    parts = urlsplit(uri)
    if parts.scheme == "file" and parts.netloc in ("", "localhost") and not parts.query:
        path = unquote(parts.path)
        if not os.path.isabs(path):
            raise InvalidURI(f"import source {uri!r} must be an absolute file:/// path")
        return "file", "", path
    if parts.scheme == "s3" and parts.netloc and not parts.query:
        return "s3", parts.netloc, parts.path.lstrip("/")
    raise InvalidURI(f"unsupported import source {uri!r}: use file:///path or s3://bucket/key")


def _destination_prefix(destination: object) -> str:
    if not isinstance(destination, str):
        raise InvalidArgument(f"destination must be a path prefix, got {destination!r:.60}")
    if destination and not destination.endswith("/"):
        destination += "/"
    validate.prefix_key(destination)
    return destination


def _destination_path(destination: object) -> str:
    if not isinstance(destination, str) or not destination or destination.endswith("/"):
        raise InvalidArgument(
            f"an imported object needs a destination path (not a prefix), got {destination!r:.60}"
        )
    validate.written_key(destination)
    return destination


def _check_outside_namespaces(src: Located, stored: list[tuple[str, str]]) -> None:
    """lakeFS refuses imports from its storage namespace; this refuses every namespace of
    the deployment (their garbage collectors would delete what the import references),
    compared as :mod:`graveler.storage.namespaces` compares namespaces."""
    here = namespaces.location(src.uri)
    for name, namespace in stored:
        how = namespaces.relation_to(here, namespace)
        if how == "contains" and src.kind is ImportKind.OBJECT:
            continue  # an object named like a directory above a namespace is not in it
        if how is not None:
            raise InvalidArgument(
                f"invalid import source {src.uri}: it {how} the storage namespace of "
                f"repository {name!r} ({namespace})"
            )


def entries(repo: RepoContext, src: Located) -> Iterator[ObjectEntry]:
    """One external entry per object of the source, hashed on the way (each object is read
    once to record its SHA-256). Raises ObjectNotFound for a missing object source, InvalidKey
    for an object whose branch path is not a valid key."""
    store = _store(repo, src)
    if src.kind is ImportKind.OBJECT:
        key = src.path if src.scheme == "s3" else os.path.basename(src.path)
        try:
            info = store.stat(key)
        except ObjectNotFound:
            raise ObjectNotFound(f"import source {src.uri} does not exist") from None
        yield _entry(src, store, info, "", src.destination)
        return
    listing = src.path if src.scheme == "s3" else ""
    for info in store.list(listing):
        key = info.key[len(listing) :]
        yield _entry(src, store, info, key, src.destination + key)


def _entry(
    src: Located, store: ObjectStore, info: ObjectInfo, relative: str, path: str
) -> ObjectEntry:
    """The entry of the object ``info`` at branch ``path`` (``relative``: its key below a
    prefix source)."""
    validate.written_key(path)
    return ObjectEntry(
        path=path,
        physical_address=src.address(relative),
        size=info.size,
        checksum=stored_sha256(store, info.key),
        mtime=info.mtime,
        content_type=guess_type(path),
        external=True,
    )


def _store(repo: RepoContext, src: Located) -> ObjectStore:
    if src.scheme == "file":
        root = src.path if src.kind is ImportKind.PREFIX else os.path.dirname(src.path)
        return open_object_store(root)
    return repo.external.bucket(src.bucket)
