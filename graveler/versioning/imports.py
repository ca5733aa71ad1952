"""Import: commit objects that already exist outside the repository, without copying them.

``Repository.import_data("main", "s3://bucket/raw/", "raw/")`` lists the source, and commits on
the branch one entry per object, whose address is *external* (the object's full URI; see
:mod:`graveler.storage.entry`). As in lakeFS:

* the import is one commit on the branch (pre-commit and post-commit hooks run), recording
  ``.lakefs.merge.strategy: source-wins``; the branch must have no uncommitted changes;
* everything that was under the destination prefix is replaced by the imported objects
  (objects under the prefix that the source does not hold are removed);
* the source may not overlap the storage namespace of any repository of this deployment:
  a namespace's objects belong to its repository (and its garbage collector).

Garbage collection never deletes an imported object: it only ever lists and deletes inside the
repository's own namespace. fsck checks that each imported object still exists with its
recorded size (and, with ``verify_objects``, its SHA-256); reads verify both, so an object
changed at the source after the import is refused as corrupt rather than served.

Each object is read once while importing, to record its SHA-256 (nothing is written).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from urllib.parse import unquote, urlsplit

from graveler.core import validate
from graveler.core.errors import InvalidArgument, InvalidURI, NoChanges
from graveler.core.hookevents import EventRecord, HookEvent
from graveler.core.model import Commit
from graveler.storage import namespaces
from graveler.storage.committed.apply import Change
from graveler.storage.entry import ObjectEntry
from graveler.storage.external import file_address, s3_address
from graveler.storage.objectstore import ObjectStore, open_object_store, stored_sha256
from graveler.versioning.cherrypick import clean_branch
from graveler.versioning.commit import _committer, advance_branch, retry_moved
from graveler.versioning.conflicts import LAKEFS_MERGE_STRATEGY_KEY
from graveler.versioning.writes import guess_type
from graveler.views.context import RepoContext, hooked
from graveler.views.history import make_commit

IMPORT_SOURCE_KEY = ".graveler.import.source"


@dataclass(frozen=True, slots=True)
class ImportResult:
    """The import commit and how many objects it references."""

    commit: Commit
    objects: int
    source: str
    destination: str


@dataclass(frozen=True, slots=True)
class _Source:
    """A canonical import source: a directory (``file``) or a bucket prefix (``s3``)."""

    scheme: str
    bucket: str  # "" for file
    path: str  # absolute directory, or the key prefix ("" or ending with "/")

    @property
    def uri(self) -> str:
        return f"file://{self.path}" if self.scheme == "file" else f"s3://{self.bucket}/{self.path}"

    def address(self, key: str) -> str:
        if self.scheme == "file":
            return file_address(os.path.join(self.path, key))
        return s3_address(self.bucket, self.path + key)


def import_data(
    repo: RepoContext,
    branch: str,
    source: str,
    destination: str = "",
    *,
    message: str | None = None,
    metadata: Mapping[str, str] | None = None,
    committer: str | None = None,
) -> ImportResult:
    """Import every object under ``source`` (``file:///dir`` or ``s3://bucket/prefix``) to
    ``destination`` (a path prefix; ``""`` is the whole branch) on ``branch``; see the module
    docstring. Raises InvalidURI / InvalidArgument (bad source, overlap with a namespace, bad
    key), DirtyBranch, ProtectedBranch, NoChanges, HookAborted; nothing changes then."""
    src = _parse_source(source)
    _check_outside_namespaces(repo, src)
    prefix = _destination(destination)
    text, meta = _commit_fields(src, message, metadata)
    who = _committer(committer)
    clean_branch(repo, branch, "import")
    entries = list(_entries(src, prefix, _store(repo, src)))
    attempt = partial(_commit, repo, branch, prefix, entries, (text, who, meta))
    commit = retry_moved(attempt, f"import into {branch!r}")
    return ImportResult(commit, len(entries), src.uri, prefix)


def _commit(
    repo: RepoContext,
    branch: str,
    prefix: str,
    entries: list[ObjectEntry],
    fields: tuple[str, str, dict[str, str]],
) -> Commit:
    """One try at committing the import over the branch's current head."""
    text, who, meta = fields
    b = clean_branch(repo, branch, "import")
    head = repo.get_commit(b.commit_id)
    tree, _ = repo.committed.apply(
        head.metarange_id, _replacing(repo, head.metarange_id, prefix, entries)
    )
    if tree == head.metarange_id:
        raise NoChanges(f"importing into {branch!r} changes nothing")
    proposed = make_commit([head], tree, text, who, meta)
    event = EventRecord(HookEvent.PRE_COMMIT, proposed, branch=branch, source_ref=branch)
    with hooked(repo, event):
        new = advance_branch(repo, b, proposed)
    return new


def _commit_fields(
    src: _Source, message: str | None, metadata: Mapping[str, str] | None
) -> tuple[str, dict[str, str]]:
    meta = validate.metadata(metadata)
    meta[LAKEFS_MERGE_STRATEGY_KEY] = "source-wins"
    meta[IMPORT_SOURCE_KEY] = src.uri
    text = message if message is not None else f"Import from {src.uri}"
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgument("an import needs a non-empty message")
    return validate.text(text, "commit message"), meta


def _parse_source(uri: str) -> _Source:
    if not isinstance(uri, str) or not uri:
        raise InvalidURI("an import needs a source URI: file:///dir or s3://bucket/prefix")
    parts = urlsplit(uri)
    if parts.scheme == "file" and parts.netloc in ("", "localhost") and not parts.query:
        path = unquote(parts.path)
        if not os.path.isabs(path):
            raise InvalidURI(f"import source {uri!r} must be an absolute file:/// path")
        real = os.path.realpath(path)
        if not os.path.isdir(real):
            raise InvalidURI(f"import source {uri!r} is not a directory")
        return _Source("file", "", real)
    if parts.scheme == "s3" and parts.netloc and not parts.query:
        key = parts.path.lstrip("/")
        return _Source("s3", parts.netloc, key if not key or key.endswith("/") else key + "/")
    raise InvalidURI(f"unsupported import source {uri!r}: use file:///dir or s3://bucket/prefix")


def _check_outside_namespaces(repo: RepoContext, src: _Source) -> None:
    """lakeFS refuses imports from its storage namespace; this refuses every namespace of the
    deployment (their garbage collectors would delete what the import references), compared
    as :mod:`graveler.storage.namespaces` compares namespaces (one canonical spelling each)."""
    here = namespaces.location(src.uri)
    for info in repo.refs.list_repositories():
        how = namespaces.relation_to(here, info.storage_namespace)
        if how is not None:
            raise InvalidArgument(
                f"invalid import source {src.uri}: it {how} the storage namespace of "
                f"repository {info.name!r} ({info.storage_namespace})"
            )


def _destination(destination: str) -> str:
    if not isinstance(destination, str):
        raise InvalidArgument(f"destination must be a path prefix, got {destination!r:.60}")
    if destination and not destination.endswith("/"):
        destination += "/"
    validate.prefix_key(destination)
    return destination


def _store(repo: RepoContext, src: _Source) -> ObjectStore:
    if src.scheme == "file":
        return open_object_store(src.path)
    return repo.external.bucket(src.bucket)


def _entries(src: _Source, prefix: str, store: ObjectStore) -> Iterator[ObjectEntry]:
    """One external entry per object under the source, in key order, hashed on the way."""
    listing_prefix = src.path if src.scheme == "s3" else ""
    for info in store.list(listing_prefix):
        key = info.key[len(listing_prefix) :]
        path = prefix + key
        validate.written_key(path)
        yield ObjectEntry(
            path=path,
            physical_address=src.address(key),
            size=info.size,
            checksum=stored_sha256(store, info.key),
            mtime=info.mtime,
            content_type=guess_type(path),
            external=True,
        )


def _replacing(
    repo: RepoContext, metarange_id: str, prefix: str, entries: list[ObjectEntry]
) -> Iterator[Change]:
    """The imported entries, plus the removal of every existing key under ``prefix`` that the
    import does not hold, in key order."""
    existing = (r.key for r in repo.committed.iterate(metarange_id, prefix=prefix.encode()))
    old = next(existing, None)
    for e in entries:
        key = e.key
        while old is not None and old < key:
            yield Change(old, None)
            old = next(existing, None)
        if old == key:
            old = next(existing, None)
        yield Change(key, e.to_record())
    while old is not None:
        yield Change(old, None)
        old = next(existing, None)
