"""Refs backup: dump a repository's commits, branches and tags into its own storage namespace,
and restore them into a database that lost them. The database can be lost; the lake cannot.

A dump lives next to the data it describes::

    <namespace>/_graveler/refs/<dump-id>/commits.jsonl
    <namespace>/_graveler/refs/<dump-id>/branches.jsonl
    <namespace>/_graveler/refs/<dump-id>/tags.jsonl
    <namespace>/_graveler/refs/<dump-id>/manifest.json    (written last)

A dump without its manifest is incomplete and is never used. ``dump-id`` is
``<UTC time, microseconds>Z-<8 hex>``, so dump IDs sort by time. Parts are JSON lines, one
canonical JSON record per line. The manifest holds the format version, the repository (name,
namespace, default branch, creation date, range settings), and the record count and SHA-256 of
every part.

Restoring verifies the manifest and every part's hash, recomputes every commit ID from the
commit's content, checks generations and that every parent, branch and tag target is in the dump,
and only then writes the repository with its commits, branches and tags in one database
transaction, so a bad dump leaves nothing behind. Branches come back with empty staging areas:
uncommitted changes are not part of a dump (:func:`dump_refs` names the branches that had some).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graveler.client import Graveler
from graveler.core import validate
from graveler.core.errors import (
    CorruptFile,
    InvalidArgument,
    NotFound,
    ObjectNotFound,
    UnsupportedFormat,
)
from graveler.core.model import Branch, Commit, RangeSettings, Tag
from graveler.core.model import Repository as RepositoryInfo
from graveler.repository import Repository
from graveler.storage import namespaces
from graveler.storage.committed.files import TREE_PREFIX
from graveler.storage.committed.splitter import validate_settings
from graveler.storage.objectstore.port import ObjectStore
from graveler.views.history import commit_problem
from graveler.views.layers import new_staging_token

DUMP_PREFIX = TREE_PREFIX + "refs/"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
PARTS = ("commits", "branches", "tags")
_DUMP_ID = re.compile(r"^[0-9]{8}T[0-9]{12}Z-[0-9a-f]{8}$")


@dataclass(frozen=True, slots=True)
class DumpInfo:
    """Where a dump was written and what it holds."""

    dump_id: str
    location: str  # URI of the dump's directory
    commits: int
    branches: int
    tags: int
    uncommitted_branches: list[str] = field(default_factory=list)  # changes NOT in the dump


# --- dump ----------------------------------------------------------------------------------------


def dump_refs(repo: Repository) -> DumpInfo:
    """Write every commit, branch and tag of ``repo`` to a new dump in its namespace.

    Branches and tags are read before commits, and commits are never deleted, so every commit
    a dumped ref points at is in the dump even while other processes commit."""
    branches = repo.list_branches()
    tags = repo.list_tags()
    commits = sorted(repo.refs.iter_commits(repo.name), key=lambda c: (c.generation, c.id))
    dump_id = f"{datetime.now(UTC):%Y%m%dT%H%M%S%f}Z-{uuid.uuid4().hex[:8]}"
    base = f"{DUMP_PREFIX}{dump_id}/"
    records = {
        "commits": [_commit_doc(c) for c in commits],
        "branches": [_branch_doc(b) for b in branches],
        "tags": [{"name": t.name, "commit_id": t.commit_id} for t in tags],
    }
    parts: dict[str, Any] = {}
    for name in PARTS:
        data = b"".join(_canonical(doc) + b"\n" for doc in records[name])
        repo.store.put(f"{base}{name}.jsonl", data)
        parts[name] = {"records": len(records[name]), "sha256": hashlib.sha256(data).hexdigest()}
    manifest = {"version": FORMAT_VERSION, "dump_id": dump_id, "repository": _repo_doc(repo.info)}
    manifest["parts"] = parts
    repo.store.put(base + MANIFEST, _canonical(manifest))
    dirty = [b.name for b in branches if _has_uncommitted(repo, b)]
    location = f"{repo.store.uri}/{base}".rstrip("/")
    return DumpInfo(dump_id, location, len(commits), len(branches), len(tags), dirty)


def list_dumps(store: ObjectStore) -> list[str]:
    """IDs of the complete dumps (those with a manifest) in ``store``, oldest first."""
    found = []
    for info in store.list(DUMP_PREFIX):
        dump_id, _, rest = info.key[len(DUMP_PREFIX) :].partition("/")
        if rest == MANIFEST:
            found.append(dump_id)
    return sorted(found)


# --- restore -------------------------------------------------------------------------------------


def restore_refs(
    client: Graveler, name: str, namespace: str, dump_id: str | None = None
) -> Repository:
    """Recreate repository ``name`` from a dump in ``namespace`` (the newest complete one unless
    ``dump_id`` is given). The repository must not exist in the database (AlreadyExists);
    NotFound when there is no such dump; CorruptFile when the dump fails verification.
    Nothing is written unless every check passes."""
    validate.repository_name(name)
    namespace = namespaces.canonical_namespace(namespace)
    store = client.object_store(namespace)
    if dump_id is not None and not (isinstance(dump_id, str) and _DUMP_ID.match(dump_id)):
        raise InvalidArgument(
            f"{dump_id!r} is not a refs dump ID (like 20260101T000000000000Z-0a1b2c3d)"
        )
    chosen = dump_id or _latest(store, namespace)
    manifest = _read_manifest(store, chosen)
    info = _repo_from(manifest.get("repository"), name, namespace)
    namespaces.check_free(client.metadata, client.object_store, name, namespace, restoring=info)
    commits = [_to_commit(doc) for doc in _read_part(store, chosen, manifest, "commits")]
    branches = [
        _to_branch(d, new_staging_token(name, str(d.get("name"))))
        for d in _read_part(store, chosen, manifest, "branches")
    ]
    tags = [_to_tag(d) for d in _read_part(store, chosen, manifest, "tags")]
    _verify(info, commits, branches, tags)
    client.metadata.restore_repository(info, commits, branches, tags)
    namespaces.claim_new(client.metadata, store, info, client.database_url)
    return client.repository(name)


def _latest(store: ObjectStore, namespace: str) -> str:
    dumps = list_dumps(store)
    if not dumps:
        raise NotFound(f"no refs dump in {namespace}; write one with 'graveler refs dump'")
    return dumps[-1]


def _read_manifest(store: ObjectStore, dump_id: str) -> dict[str, Any]:
    key = f"{DUMP_PREFIX}{dump_id}/{MANIFEST}"
    try:
        manifest = _parse(store.get(key), key)
    except ObjectNotFound:
        raise NotFound(f"no complete refs dump {dump_id!r} in {store.uri}") from None
    if not isinstance(manifest, dict) or manifest.get("version") != FORMAT_VERSION:
        raise UnsupportedFormat(f"refs dump {dump_id}: unknown manifest version")
    return manifest


def _read_part(
    store: ObjectStore, dump_id: str, manifest: dict[str, Any], part: str
) -> list[dict[str, Any]]:
    key = f"{DUMP_PREFIX}{dump_id}/{part}.jsonl"
    try:
        data = store.get(key)
        expected = manifest["parts"][part]
        if hashlib.sha256(data).hexdigest() != expected["sha256"]:
            raise CorruptFile(f"refs dump {dump_id}: {part} does not match the manifest's hash")
        docs = [_parse(line, key) for line in data.splitlines()]
    except ObjectNotFound:
        raise CorruptFile(f"refs dump {dump_id}: part {part!r} is missing") from None
    except (KeyError, TypeError) as exc:
        raise CorruptFile(f"refs dump {dump_id}: the manifest does not describe {part}") from exc
    if len(docs) != expected["records"] or not all(isinstance(d, dict) for d in docs):
        raise CorruptFile(f"refs dump {dump_id}: {part} has the wrong number of records")
    return docs


def _verify(
    info: RepositoryInfo, commits: list[Commit], branches: list[Branch], tags: list[Tag]
) -> None:
    """Raise CorruptFile unless the refs form a consistent, content-addressed history."""
    known = {c.id: c for c in commits}
    for c in commits:
        missing = [p for p in c.parents if p not in known]
        if missing:
            raise CorruptFile(f"refs dump: parent {missing[0]} of commit {c.id} is not in it")
        problem = commit_problem(c, [known[p] for p in c.parents])
        if problem:
            raise CorruptFile(f"refs dump: commit {c.id}: {problem}")
    targets = [(b.name, b.commit_id) for b in branches] + [(t.name, t.commit_id) for t in tags]
    for ref_name, target in targets:
        if target not in known:
            raise CorruptFile(f"refs dump: {ref_name!r} points at a commit that is not in it")
    if info.default_branch not in {b.name for b in branches}:
        raise CorruptFile(f"refs dump: the default branch {info.default_branch!r} is missing")


# --- encoding ------------------------------------------------------------------------------------


def _canonical(doc: Any) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _parse(data: bytes, key: str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptFile(f"refs dump file {key} is not valid JSON") from exc


def _commit_doc(c: Commit) -> dict[str, Any]:
    return {
        "id": c.id,
        "parents": list(c.parents),
        "metarange_id": c.metarange_id,
        "message": c.message,
        "committer": c.committer,
        "creation_date": c.creation_date.astimezone(UTC).isoformat(timespec="microseconds"),
        "metadata": dict(c.metadata),
        "generation": c.generation,
    }


def _to_commit(doc: dict[str, Any]) -> Commit:
    try:
        return Commit(
            id=str(doc["id"]),
            parents=tuple(str(p) for p in doc["parents"]),
            metarange_id=str(doc["metarange_id"]),
            message=str(doc["message"]),
            committer=str(doc["committer"]),
            creation_date=datetime.fromisoformat(doc["creation_date"]).astimezone(UTC),
            metadata={str(k): str(v) for k, v in dict(doc["metadata"]).items()},
            generation=int(doc["generation"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptFile(f"refs dump: malformed commit record {str(doc)[:80]}") from exc


def _branch_doc(b: Branch) -> dict[str, Any]:
    return {"name": b.name, "commit_id": b.commit_id, "protected": b.protected}


def _to_branch(doc: dict[str, Any], staging_token: str) -> Branch:
    try:
        name = validate.stored_ref_name(doc["name"], "branch")
        return Branch(name, str(doc["commit_id"]), staging_token, (), bool(doc["protected"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptFile(f"refs dump: malformed branch record {str(doc)[:80]}") from exc


def _to_tag(doc: dict[str, Any]) -> Tag:
    try:
        return Tag(validate.stored_ref_name(doc["name"], "tag"), str(doc["commit_id"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptFile(f"refs dump: malformed tag record {str(doc)[:80]}") from exc


def _repo_doc(info: RepositoryInfo) -> dict[str, Any]:
    s = info.range_settings
    return {
        "name": info.name,
        "storage_namespace": info.storage_namespace,
        "default_branch": info.default_branch,
        "creation_date": info.creation_date.astimezone(UTC).isoformat(timespec="microseconds"),
        "range_settings": [s.min_size, s.max_size, s.raggedness],
    }


def _repo_from(doc: Any, name: str, namespace: str) -> RepositoryInfo:
    try:
        settings = validate_settings(RangeSettings(*(int(v) for v in doc["range_settings"])))
        return RepositoryInfo(
            name=name,
            storage_namespace=namespace,
            default_branch=str(doc["default_branch"]),
            creation_date=datetime.fromisoformat(doc["creation_date"]).astimezone(UTC),
            range_settings=settings,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptFile("refs dump: the manifest's repository record is malformed") from exc


def _has_uncommitted(repo: Repository, branch: Branch) -> bool:
    return any(repo.staging.count_staged(t) for t in branch.tokens)
