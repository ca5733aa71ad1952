"""The Repository facade: refs, branches, tags and objects of one repository.

Versioning operations that build trees (commit, merge, revert, reset, diff, log) live in
:mod:`graveler.operations` and are exposed here as thin methods.
"""

from __future__ import annotations

import mimetypes
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, BinaryIO, TypedDict, Unpack

from graveler import entry as entries
from graveler import operations, validate
from graveler.commits import first_parent_log
from graveler.committed.manager import CommittedManager
from graveler.committed.record import ValueRecord
from graveler.entry import ObjectEntry
from graveler.errors import (
    AlreadyExists,
    BranchNotFound,
    CommitNotFound,
    InvalidArgument,
    ObjectNotFound,
    ProtectedBranch,
    RefNotFound,
    TagNotFound,
)
from graveler.listing import ListingPage, list_page
from graveler.model import Branch, Commit, StagedEntry, Tag
from graveler.model import Repository as RepositoryInfo
from graveler.objects import (
    HashingReader,
    checked_entry,
    full_address,
    new_physical_address,
    normalize_address,
    open_verified,
    read_verified,
)
from graveler.objectstore.port import ObjectStore
from graveler.refexpr import looks_like_commit_prefix, parse_ref
from graveler.staging import branch_records, branch_tokens, staged_lookup

if TYPE_CHECKING:
    from graveler.client import Graveler
    from graveler.transaction import Transaction


class EntryAttributes(TypedDict, total=False):
    """Optional attributes of a linked object (computed or defaulted when absent or None)."""

    checksum: str | None
    size: int | None
    content_type: str | None
    metadata: Mapping[str, str] | None
    mtime: datetime | None


@dataclass(frozen=True, slots=True)
class ResolvedRef:
    """What a ref expression points at. ``branch`` is set for a plain branch name, whose
    reads include the branch's staged changes."""

    commit: Commit
    branch: Branch | None = None


def new_staging_token(repo: str, branch: str) -> str:
    return f"{repo}/{branch}/{uuid.uuid4().hex}"


class Repository:
    def __init__(self, client: Graveler, info: RepositoryInfo) -> None:
        self.client = client
        self.info = info
        self.name = info.name
        self.refs = client.metadata
        self.staging = client.metadata
        self.store: ObjectStore = client.object_store(info.storage_namespace)
        self.committed = CommittedManager(self.store, client.cache, info.range_settings)

    def __repr__(self) -> str:
        return f"Repository({self.name!r}, namespace={self.info.storage_namespace!r})"

    # --- refs -----------------------------------------------------------------------------------

    def get_commit(self, commit_id: str) -> Commit:
        """A commit by full ID. Commits are immutable and content-addressed, so they are
        cached (per client) after the first read."""
        key = (self.name, commit_id)
        cached = self.client.commit_cache.get(key)
        if cached is None:
            cached = self.refs.get_commit(self.name, commit_id)
            self.client.commit_cache.put(key, cached)
        return cached

    def resolve(self, ref: str) -> ResolvedRef:
        """Resolve a ref expression (branch, tag, commit ID or prefix, then ~N / ^N)."""
        expr = parse_ref(ref)
        resolved = self._resolve_base(expr.base)
        if expr.is_plain:
            return resolved
        commit = resolved.commit
        for op, n in expr.modifiers:
            commit = self._walk(commit, op, n, ref)
        return ResolvedRef(commit)

    def _resolve_base(self, base: str) -> ResolvedRef:
        if len(base) == 64 and looks_like_commit_prefix(base):
            try:
                return ResolvedRef(self.get_commit(base))
            except CommitNotFound:
                pass
        try:
            branch = self.refs.get_branch(self.name, base)
            return ResolvedRef(self.get_commit(branch.commit_id), branch)
        except BranchNotFound:
            pass
        try:
            return ResolvedRef(self.get_commit(self.refs.get_tag(self.name, base).commit_id))
        except TagNotFound:
            pass
        if looks_like_commit_prefix(base):
            found = self.refs.commits_with_prefix(self.name, base, limit=2)
            if len(found) == 1:
                return ResolvedRef(self.get_commit(found[0]))
            if len(found) > 1:
                raise RefNotFound(f"commit prefix {base!r} is ambiguous in {self.name}")
        raise RefNotFound(f"{base!r} is not a branch, tag or commit of repository {self.name!r}")

    def _walk(self, commit: Commit, op: str, n: int, ref: str) -> Commit:
        if op == "~":
            for _ in range(n):
                if not commit.parents:
                    raise RefNotFound(f"{ref!r} goes past the first commit")
                commit = self.get_commit(commit.parents[0])
            return commit
        if n == 0:
            return commit
        if n > len(commit.parents):
            raise RefNotFound(f"{ref!r}: commit {commit.id[:12]} has no parent number {n}")
        return self.get_commit(commit.parents[n - 1])

    # --- branches -------------------------------------------------------------------------------

    def create_branch(self, name: str, source: str | None = None) -> Branch:
        validate.branch_name(name)
        commit = self.resolve(source or self.info.default_branch).commit
        branch = Branch(name, commit.id, new_staging_token(self.name, name))
        self.refs.create_branch(self.name, branch)
        return branch

    def branch(self, name: str) -> Branch:
        return self.refs.get_branch(self.name, name)

    def list_branches(self) -> list[Branch]:
        return self.refs.list_branches(self.name)

    def delete_branch(self, name: str) -> None:
        if name == self.info.default_branch:
            raise InvalidArgument(
                f"branch {name!r} is the default branch of {self.name!r} and cannot be deleted"
            )
        removed = self.refs.delete_branch(self.name, name)
        self.staging.drop_tokens(branch_tokens(removed))

    def protect_branch(self, name: str, protected: bool = True) -> Branch:
        def change(b: Branch) -> Branch:
            return replace(b, protected=protected)

        return operations.update_branch(self, name, change)

    # --- tags -----------------------------------------------------------------------------------

    def create_tag(self, name: str, ref: str) -> Tag:
        validate.tag_name(name)
        try:
            self.refs.get_branch(self.name, name)
            raise AlreadyExists(f"{name!r} is already a branch of {self.name!r}")
        except BranchNotFound:
            pass
        tag = Tag(name, self.resolve(ref).commit.id)
        self.refs.create_tag(self.name, tag)
        return tag

    def list_tags(self) -> list[Tag]:
        return self.refs.list_tags(self.name)

    def delete_tag(self, name: str) -> None:
        self.refs.delete_tag(self.name, name)

    # --- writing objects ------------------------------------------------------------------------

    def _writable(self, branch: str) -> Branch:
        b = self.refs.get_branch(self.name, branch)
        if b.protected:
            raise ProtectedBranch(
                f"branch {branch!r} is protected: write to another branch and merge into it"
            )
        return b

    def put(
        self,
        branch: str,
        path: str,
        data: bytes | BinaryIO,
        *,
        content_type: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> ObjectEntry:
        """Stream ``data`` to a new physical address and stage it at ``path``."""
        validate.object_key(path)
        meta = validate.metadata(metadata)
        self._writable(branch)
        address = new_physical_address()
        reader = HashingReader(data)
        info = self.store.put(address, reader)  # type: ignore[arg-type]
        entry = ObjectEntry(
            path=path,
            physical_address=address,
            size=reader.size,
            checksum=reader.hexdigest(),
            mtime=info.mtime,
            content_type=content_type or _guess_type(path),
            metadata=meta,
        )
        self.staging.stage(self.name, branch, [entry.to_staged()])
        return entry

    def link(
        self, branch: str, path: str, physical_address: str, **attrs: Unpack[EntryAttributes]
    ) -> ObjectEntry:
        """Stage an object that already exists inside the namespace (no copy)."""
        entry = self.make_linked_entry(path, physical_address, **attrs)
        self.stage_entries(branch, [entry])
        return entry

    def make_linked_entry(
        self, path: str, physical_address: str, **attrs: Unpack[EntryAttributes]
    ) -> ObjectEntry:
        """The entry for an existing object inside the namespace. Size, mtime and checksum are
        read from the store when not given (the checksum by streaming the object once); a
        writer that just stored the object passes all three and the store is not asked."""
        checksum, size, mtime = attrs.get("checksum"), attrs.get("size"), attrs.get("mtime")
        content_type, metadata = attrs.get("content_type"), attrs.get("metadata")
        validate.object_key(path)
        address = normalize_address(self.info.storage_namespace, physical_address)
        if size is None or mtime is None:
            info = self.store.stat(address)
            size = info.size if size is None else size
            mtime = info.mtime if mtime is None else mtime
        if checksum is None:
            with self.store.open(address) as fh:
                reader = HashingReader(fh)
                while reader.read(1 << 20):
                    pass
            checksum = reader.hexdigest()
        return ObjectEntry(
            path=path,
            physical_address=address,
            size=size,
            checksum=checksum,
            mtime=mtime,
            content_type=content_type or _guess_type(path),
            metadata=validate.metadata(metadata),
        )

    def stage_entries(
        self, branch: str, items: Iterable[ObjectEntry], *, delete: Iterable[str] = ()
    ) -> int:
        """Stage many entries in one transaction; returns how many. Paths in ``delete`` are
        removed in the same transaction (an entry in ``items`` at such a path wins)."""
        self._writable(branch)
        count = 0

        def staged() -> Iterator[StagedEntry]:
            nonlocal count
            for path in delete:
                yield StagedEntry(validate.object_key(path), None, None)
            for e in items:
                validate.object_key(e.path)
                count += 1
                yield checked_entry(self.info.storage_namespace, e).to_staged()

        self.staging.stage(self.name, branch, staged())
        return count

    def delete(self, branch: str, path: str) -> None:
        """Stage the removal of ``path``; raises ObjectNotFound when it is not there."""
        self.stat(branch, path)
        self._writable(branch)
        self.staging.stage(self.name, branch, [StagedEntry(validate.object_key(path), None, None)])

    def delete_many(self, branch: str, paths: Iterable[str]) -> int:
        self._writable(branch)
        keys = [StagedEntry(validate.object_key(p), None, None) for p in paths]
        self.staging.stage(self.name, branch, keys)
        return len(keys)

    # --- reading objects ------------------------------------------------------------------------

    def stat(self, ref: str, path: str) -> ObjectEntry:
        key = validate.object_key(path)
        resolved = self.resolve(ref)
        if resolved.branch is not None:
            staged = staged_lookup(self.staging, branch_tokens(resolved.branch), key)
            if staged is not None:
                if staged.value is None:
                    raise ObjectNotFound(f"{path!r} is deleted on branch {ref!r}")
                return entries.decode(key, staged.value)
        rec = self.committed.get(resolved.commit.metarange_id, key)
        if rec is None:
            raise ObjectNotFound(f"no object {path!r} at {ref!r} in {self.name!r}")
        return entries.decode(key, rec.value)

    def stat_many(self, ref: str, paths: Sequence[str]) -> list[ObjectEntry | None]:
        """Entries for many paths at once (None where absent), aligned with ``paths``.
        Committed lookups are batched; a branch's staged changes are consulted per path."""
        keys = [validate.object_key(p) for p in paths]
        resolved = self.resolve(ref)
        records = self.committed.get_many(resolved.commit.metarange_id, keys)
        out = [None if r is None else entries.decode(r.key, r.value) for r in records]
        if resolved.branch is not None:
            tokens = branch_tokens(resolved.branch)
            if resolved.branch.sealed_tokens or self.staging.count_staged(tokens[0]):
                for i, key in enumerate(keys):
                    staged = staged_lookup(self.staging, tokens, key)
                    if staged is not None:
                        value = staged.value
                        out[i] = None if value is None else entries.decode(key, value)
        return out

    def open(self, ref: str, path: str) -> BinaryIO:
        """A streaming reader of the object's bytes. Reading it to the end verifies size and
        SHA-256 and raises CorruptFile on a mismatch (not after a seek)."""
        return open_verified(self.store, self.stat(ref, path))

    def get(self, ref: str, path: str) -> bytes:
        """The object's bytes; CorruptFile when they are not the recorded size and SHA-256."""
        return read_verified(self.store, self.stat(ref, path))

    def physical_uri(self, entry: ObjectEntry) -> str:
        return full_address(self.info.storage_namespace, entry.physical_address)

    def iter_objects(self, ref: str, prefix: str = "", after: str = "") -> Iterator[ObjectEntry]:
        """Every object under ``prefix`` (recursive), in path order."""
        start = validate.prefix_key(validate.text(after, "after"))
        for rec in self._records(ref, validate.prefix_key(prefix), start):
            yield entries.decode(rec.key, rec.value)

    def list(
        self,
        ref: str,
        prefix: str = "",
        *,
        delimiter: str | None = "/",
        after: str = "",
        amount: int = 1000,
    ) -> ListingPage:
        """One page of objects and common prefixes under ``prefix``."""
        pfx = validate.prefix_key(prefix)
        validate.prefix_key(validate.text(after, "after"))
        if delimiter:
            validate.object_key(delimiter)
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise InvalidArgument(f"amount must be an integer, got {amount!r}")
        return list_page(
            lambda start: self._records(ref, pfx, start), pfx, delimiter, after, amount
        )

    def _records(self, ref: str, prefix: bytes, after: bytes) -> Iterator[ValueRecord]:
        resolved = self.resolve(ref)
        start = after + b"\x00" if after else b""
        mid = resolved.commit.metarange_id
        if resolved.branch is None:
            return self.committed.iterate(mid, start, prefix)
        return branch_records(self.staging, self.committed, resolved.branch, mid, start, prefix)

    # --- versioning: the functions of graveler.operations, bound as methods ----------------------

    commit = operations.commit
    merge = operations.merge
    revert = operations.revert
    reset = operations.reset
    diff = operations.diff_refs
    diff_uncommitted = operations.diff_uncommitted
    import_entries = operations.import_entries

    def log(self, ref: str, amount: int | None = None) -> Iterator[Commit]:
        if amount is not None and amount < 0:
            raise InvalidArgument("amount must be >= 0")
        return first_parent_log(self.get_commit, self.resolve(ref).commit, amount)

    def transaction(
        self, base: str | None = None, **kwargs: object
    ) -> AbstractContextManager[Transaction]:
        from graveler.transaction import transaction

        return transaction(self, base or self.info.default_branch, **kwargs)  # type: ignore[arg-type]


def _guess_type(path: str) -> str:
    return mimetypes.guess_type(path)[0] or entries.DEFAULT_CONTENT_TYPE


def now() -> datetime:
    return datetime.now(UTC)
