"""Consistency check ("fsck") of one repository: refs, history, trees and objects.

A **problem** makes the repository unclean:

* a branch or tag points at a commit that does not exist;
* a reachable commit (from any branch or tag, through all parents) is missing, does not hash to
  its ID (the canonical encoding of :mod:`graveler.views.history`), or has an inconsistent
  generation;
* a reachable commit's metarange, or a range it lists, is missing from the storage namespace,
  or its decoded entries do not hash to its name, or the metarange describes the range wrongly
  (first key, last key, count). Tree files are read from the store itself, never from a cache;
* a committed or staged entry does not decode, or its physical object is missing or has another
  size than recorded (with ``verify_objects``, also: its bytes do not hash to the recorded
  SHA-256). Imported objects (external addresses, outside the namespace) are checked the same
  way where they live;
* a table at a branch head or tag (an Iceberg table, :mod:`graveler.tables.check`)
  references a file that the commit has no entry for.

**Expired** objects are not problems either: objects of commits that garbage collection
expired (it records them, :mod:`graveler.maintenance.gc.ledger`) and deleted, referenced by no
retained commit and no staged entry. A missing object that any other commit or staged entry needs is
still a problem.

**Dangling** things are reported but are not problems: objects and tree files that nothing
reachable or staged references (left by interrupted writes, by deleted branches, or waiting for
garbage collection), commits that no branch or tag reaches, and (local namespaces) temporary
files of writes that were killed before they finished.

fsck only reads, and may run while other processes write: branches and tags are read before
commits, and every reference is collected before the namespace is listed, so work done during
the run is never reported as a problem (it may show up as dangling).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from graveler.core.errors import CorruptFile, InvalidArgument, ObjectNotFound, StorageError
from graveler.core.model import EMPTY_METARANGE_ID, Commit
from graveler.maintenance.gc.ledger import expired_commits
from graveler.maintenance.gc.mark import tree_file_id
from graveler.storage import entry as entries
from graveler.storage.committed.files import (
    TREE_PREFIX,
    MetarangeData,
    decode_metarange_file,
    decode_range_file,
)
from graveler.storage.committed.rangedata import RangeData
from graveler.storage.committed.record import RangeInfo
from graveler.storage.namespaces import require_owner
from graveler.storage.objectstore import stored_sha256
from graveler.storage.objectstore.local import TMP_PREFIX, LocalObjectStore
from graveler.storage.objectstore.port import ObjectStore
from graveler.tables.check import table_problems
from graveler.views.history import commit_problem

if TYPE_CHECKING:
    from graveler.repository import Repository

T = TypeVar("T")


class ProblemKind(StrEnum):
    MISSING_COMMIT = "missing-commit"
    BAD_COMMIT = "bad-commit"
    MISSING_TREE_FILE = "missing-tree-file"
    CORRUPT_TREE_FILE = "corrupt-tree-file"
    BAD_ENTRY = "bad-entry"
    MISSING_OBJECT = "missing-object"
    OBJECT_SIZE = "object-size-mismatch"
    OBJECT_CHECKSUM = "object-checksum-mismatch"
    TABLE_FILE = "table-file-not-in-tree"


@dataclass(frozen=True, slots=True)
class Problem:
    """One integrity violation: what kind, which thing (ID or key), and an explanation."""

    kind: ProblemKind
    subject: str
    detail: str


@dataclass
class FsckReport:
    """What fsck checked and found. ``clean`` is True when there is no problem."""

    repository: str
    namespace: str
    commits: int = 0  # reachable commits checked
    metaranges: int = 0  # distinct metarange files checked
    ranges: int = 0  # distinct range files checked
    entries: int = 0  # committed entries in those ranges
    staged: int = 0  # staged entries (values and tombstones) of every branch
    objects: int = 0  # distinct referenced objects checked
    problems: list[Problem] = field(default_factory=list)
    expired_commits: int = 0  # reachable commits whose objects garbage collection expired
    expired_objects: list[str] = field(default_factory=list)  # deleted by GC, not a problem
    dangling_objects: list[str] = field(default_factory=list)
    dangling_tree_files: list[str] = field(default_factory=list)
    unreachable_commits: list[str] = field(default_factory=list)
    temporary_files: list[str] = field(default_factory=list)  # local namespaces only

    @property
    def clean(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready document (``clean`` included)."""
        doc = asdict(self)
        doc["problems"] = [
            {"kind": p.kind.value, "subject": p.subject, "detail": p.detail} for p in self.problems
        ]
        doc["clean"] = self.clean
        return doc


@dataclass(frozen=True, slots=True)
class _Reference:
    size: int
    checksum: str
    where: str
    live: bool  # referenced by a commit GC retains, or by staging (else only by expired ones)


def fsck(repo: Repository, *, verify_objects: bool = False) -> FsckReport:
    """Check ``repo`` (see the module docstring). Never raises for what it finds; raises
    :class:`~graveler.core.errors.StorageError` only when the store or database cannot be read,
    and NamespaceInUse when another repository claims the namespace (its objects would be
    reported as this one's)."""
    require_owner(repo.refs, repo.store, repo.info, "fsck")
    return _Checker(repo, verify_objects).run()


class _Checker:
    def __init__(self, repo: Repository, verify_objects: bool) -> None:
        self.repo = repo
        self.store = repo.store
        self.verify_objects = verify_objects
        self.report = FsckReport(repo.name, repo.info.storage_namespace)
        self.tree_files: set[str] = set()
        self.references: dict[str, _Reference] = {}
        self.external: dict[str, _Reference] = {}  # imported objects, by full URI

    def problem(self, kind: ProblemKind, subject: str, detail: str) -> None:
        self.report.problems.append(Problem(kind, subject, detail))

    def run(self) -> FsckReport:
        branches = self.repo.list_branches()
        starts = [(b.commit_id, f"branch {b.name!r}") for b in branches]
        starts += [(t.commit_id, f"tag {t.name!r}") for t in self.repo.list_tags()]
        known = {c.id: c for c in self.repo.refs.iter_commits(self.repo.name)}
        reachable = self._walk_history(starts, known)
        self.report.unreachable_commits = sorted(set(known) - set(reachable))
        expired = expired_commits(self.store) & set(reachable)
        self.report.expired_commits = len(expired)
        # Retained commits first: a tree file first met there is live, one first met in an
        # expired commit is referenced by expired commits only.
        for cid in sorted(reachable, key=lambda c: (c in expired, c)):
            self._check_tree(reachable[cid], live=cid not in expired)
        for branch in branches:
            self._check_staging(branch.name, branch.tokens)
        self._check_tables(starts, reachable)
        self._check_namespace()
        return self.report

    def _check_tables(self, heads: list[tuple[str, str]], reachable: dict[str, Commit]) -> None:
        """Tables at branch heads and tags: every file their metadata references is in the
        tree (so it is checked below like any object, and kept by garbage collection)."""
        seen: set[str] = set()
        for cid, via in heads:
            if cid in seen or cid not in reachable:
                continue
            seen.add(cid)
            for root, subject, detail in table_problems(self.repo, cid):
                self.problem(ProblemKind.TABLE_FILE, subject, f"{via}: {detail} ({root})")

    # --- history -----------------------------------------------------------------------------

    def _walk_history(
        self, starts: list[tuple[str, str]], known: dict[str, Commit]
    ) -> dict[str, Commit]:
        reachable: dict[str, Commit] = {}
        stack = list(reversed(starts))
        while stack:
            cid, via = stack.pop()
            if cid in reachable:
                continue
            commit = known.get(cid)
            if commit is None:
                self.problem(ProblemKind.MISSING_COMMIT, cid, f"{via} points at a missing commit")
                continue
            reachable[cid] = commit
            self.report.commits += 1
            self._check_commit(commit, known)
            stack.extend((p, f"commit {cid[:12]} (parent)") for p in commit.parents)
        return reachable

    def _check_commit(self, c: Commit, known: dict[str, Commit]) -> None:
        parents = [known[p] for p in c.parents if p in known]
        problem = commit_problem(c, parents if len(parents) == len(c.parents) else None)
        if problem:
            self.problem(ProblemKind.BAD_COMMIT, c.id, problem)

    # --- trees -------------------------------------------------------------------------------

    def _check_tree(self, commit: Commit, live: bool) -> None:
        mid = commit.metarange_id
        if mid == EMPTY_METARANGE_ID or mid in self.tree_files:
            return
        self.tree_files.add(mid)
        meta = self._load(mid, decode_metarange_file, f"metarange of commit {commit.id[:12]}")
        if meta is None:
            return
        self.report.metaranges += 1
        for info in meta.ranges:
            if info.id not in self.tree_files:
                self.tree_files.add(info.id)
                self._check_range(info, meta, live)

    def _check_range(self, info: RangeInfo, meta: MetarangeData, live: bool) -> None:
        rng = self._load(info.id, decode_range_file, f"range of metarange {meta.id[:12]}")
        if rng is None:
            return
        self.report.ranges += 1
        if not _describes(info, rng):
            self.problem(
                ProblemKind.CORRUPT_TREE_FILE,
                meta.id,
                f"its entry for range {info.id[:12]} does not match the range's keys or count",
            )
        where = f"committed in range {info.id[:12]}"
        self.report.entries += len(rng.records)
        self._reference_all(((r.key, r.value) for r in rng.records), where, live)

    def _load(self, fid: str, decode: Callable[[str, bytes], T], what: str) -> T | None:
        try:
            data = self.store.get(TREE_PREFIX + fid)
        except ObjectNotFound:
            self.problem(ProblemKind.MISSING_TREE_FILE, fid, f"{what} is not in the namespace")
            return None
        try:
            return decode(fid, data)
        except CorruptFile as exc:
            self.problem(ProblemKind.CORRUPT_TREE_FILE, fid, f"{what}: {exc}")
            return None

    # --- entries and objects -----------------------------------------------------------------

    def _reference_all(self, items: Iterable[tuple[bytes, bytes]], where: str, live: bool) -> None:
        """Decode entries and remember the object each one needs (the first reference wins,
        except that a live one replaces one from expired commits only)."""
        for key, value in items:
            try:
                e = entries.decode(key, value)
            except CorruptFile as exc:
                self.problem(ProblemKind.BAD_ENTRY, _show(key), f"{where}: {exc}")
                continue
            refs = self.external if e.external else self.references
            known = refs.get(e.physical_address)
            if known is None or (live and not known.live):
                refs[e.physical_address] = _Reference(
                    e.size, e.checksum, f"{e.path!r} {where}", live
                )

    def _check_staging(self, branch: str, tokens: Iterable[str]) -> None:
        self._reference_all(self._staged_values(tokens), f"staged on branch {branch!r}", True)

    def _staged_values(self, tokens: Iterable[str]) -> Iterator[tuple[bytes, bytes]]:
        """Staged (key, value) pairs of ``tokens``, streamed; tombstones are only counted."""
        for token in tokens:
            for staged in self.repo.staging.iter_staged(token):
                self.report.staged += 1
                if staged.value is not None:
                    yield staged.key, staged.value

    def _check_namespace(self) -> None:
        present: dict[str, int] = {}
        for info in self.store.list(""):
            present[info.key] = info.size
        for key in present:
            if key.startswith(TREE_PREFIX):
                name = tree_file_id(key)  # other names under _graveler/ are not tree files
                if name is not None and name not in self.tree_files:
                    self.report.dangling_tree_files.append(name)
            elif key not in self.references:
                self.report.dangling_objects.append(key)
        for address in sorted(self.references):
            self._check_object(address, self.references[address], present.get(address))
        for address in sorted(self.external):
            self._check_external(address, self.external[address])
        if isinstance(self.store, LocalObjectStore):
            self.report.temporary_files = _temporary_files(self.store.root)

    def _check_object(
        self, address: str, ref: _Reference, size: int | None, collectable: bool = True
    ) -> None:
        """``collectable``: garbage collection may have deleted it (not an imported object)."""
        self.report.objects += 1
        if size is None and collectable and not ref.live:
            self.report.expired_objects.append(address)  # garbage collection deleted it
        elif size is None:
            self.problem(ProblemKind.MISSING_OBJECT, address, f"object of {ref.where} is missing")
        elif size != ref.size:
            self.problem(
                ProblemKind.OBJECT_SIZE,
                address,
                f"object of {ref.where} has {size} bytes, {ref.size} recorded",
            )
        elif self.verify_objects:
            actual = self._sha256(address)
            if actual is not None and actual != ref.checksum:
                self.problem(
                    ProblemKind.OBJECT_CHECKSUM,
                    address,
                    f"object of {ref.where} hashes to {actual[:16]}..., "
                    f"{ref.checksum[:16]}... recorded",
                )

    def _check_external(self, address: str, ref: _Reference) -> None:
        """An imported object, outside the namespace: it must exist with its size (and,
        when verifying, its SHA-256). Its store may be unreachable: that is a missing object."""
        try:
            store, key = self.repo.external.locate(address)
            size: int | None = store.stat(key).size
        except (ObjectNotFound, StorageError, InvalidArgument):
            size = None
        if size is None or size != ref.size or not self.verify_objects:
            self._check_object(address, ref, size, collectable=False)
            return
        self.report.objects += 1
        actual = self._sha256(key, store)
        if actual is not None and actual != ref.checksum:
            self.problem(
                ProblemKind.OBJECT_CHECKSUM, address, f"imported object of {ref.where} changed"
            )

    def _sha256(self, address: str, store: ObjectStore | None = None) -> str | None:
        try:
            return stored_sha256(store or self.store, address)
        except ObjectNotFound:
            self.problem(ProblemKind.MISSING_OBJECT, address, "object vanished during the check")
            return None


def _temporary_files(root: str) -> list[str]:
    """Paths (relative to ``root``) of temporary files left by interrupted local writes."""
    found = []
    for directory, _, files in os.walk(root):
        for name in files:
            if name.startswith(TMP_PREFIX):
                found.append(os.path.relpath(os.path.join(directory, name), root))
    return sorted(found)


def _describes(info: RangeInfo, rng: RangeData) -> bool:
    keys = rng.keys
    return (
        bool(keys)
        and keys[0] == info.min_key
        and keys[-1] == info.max_key
        and len(keys) == info.num_records
    )


def _show(key: bytes) -> str:
    return key.decode("utf-8", "replace")
