"""Ports for the mutable half of graveler: refs (repositories, branches, tags, commits) and
per-branch staging areas. One SQL implementation (``graveler.storage.refs.sql``) serves SQLite and
PostgreSQL; the conformance suite in ``tests/refs/`` runs against both.

Concurrency contracts:

* ``update_branch`` is a compare-and-swap on the whole branch row (commit_id, staging_token,
  sealed_tokens, protected): it raises :class:`BranchMoved` when the stored row differs from
  ``expected``.
* ``stage`` resolves the branch's *current* staging token and writes the entries under it in
  one transaction that excludes a concurrent ``update_branch`` of the same branch (row lock in
  PostgreSQL, the database write lock in SQLite). So a write racing a commit's seal lands
  either in the sealed token (and in that commit) or in the fresh token (staged for the next),
  never in a token nobody will read.
* Reads of staging (``get_staged``, ``iter_staged``) see committed transactions only.
* ``branch_view`` reads a branch row together with what is staged under its tokens. A view
  reflects every transaction committed before the call, by any process: a backend may hand
  out a cached view only after checking, in that call, that nothing was committed since it
  was read.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from graveler.core.model import Branch, Commit, Repository, StagedEntry, Tag

if TYPE_CHECKING:  # a type only: reads need not load the rules' module
    from graveler.core.protection import ProtectionRule


class BranchView(Protocol):
    """One consistent read of a branch: its row and the entries staged over its commit
    (current token first, then sealed tokens newest first: the first entry for a key wins)."""

    @property
    def branch(self) -> Branch: ...

    @property
    def clean(self) -> bool:
        """True when nothing at all is staged on the branch."""
        ...

    def lookup(self, key: bytes) -> StagedEntry | None:
        """The winning staged entry for ``key`` (possibly a tombstone), or None."""
        ...

    def iter_staged(self, start: bytes = b"", prefix: bytes = b"") -> Iterator[StagedEntry]:
        """Winning staged entries with key >= ``start`` under ``prefix``, bytewise order."""
        ...


class RefStore(Protocol):
    # repositories ------------------------------------------------------------------------------
    def create_repository(self, repo: Repository, initial_commit: Commit, branch: Branch) -> None:
        """Create the repository, its initial commit and default branch atomically.
        Raises AlreadyExists if the name is taken."""
        ...

    def get_repository(self, name: str) -> Repository:
        """Raises RepositoryNotFound."""
        ...

    def list_repositories(self) -> list[Repository]:
        """All repositories sorted by name."""
        ...

    def delete_repository(self, name: str) -> None:
        """Delete the repository with all its branches, tags, commits and staged entries."""
        ...

    # branches ----------------------------------------------------------------------------------
    def create_branch(self, repo: str, branch: Branch) -> None:
        """Raises AlreadyExists (name taken), RepositoryNotFound."""
        ...

    def get_branch(self, repo: str, name: str) -> Branch:
        """Raises BranchNotFound."""
        ...

    def list_branches(self, repo: str) -> list[Branch]:
        """Sorted by name."""
        ...

    def update_branch(
        self, repo: str, expected: Branch, new: Branch, *, durable: bool = True
    ) -> None:
        """Compare-and-swap ``expected`` -> ``new`` (same name). Raises BranchMoved or
        BranchNotFound. ``durable=False``: the swap may be lost with a power loss until the
        next durable write (never torn)."""
        ...

    def advance_branch(
        self, repo: str, expected: Branch, new: Branch, commit: Commit | None = None
    ) -> None:
        """Store ``commit`` (unless None) and compare-and-swap ``expected`` -> ``new``, in one
        transaction. Raises BranchMoved or BranchNotFound (and then stores nothing)."""
        ...

    def delete_branch(self, repo: str, name: str) -> Branch:
        """Delete and return the branch row (its tokens are for the caller to drop)."""
        ...

    # branch protection rules -------------------------------------------------------------------
    def get_protection_rules(self, repo: str) -> list[ProtectionRule]:
        """The repository's branch protection rules, sorted by pattern. Raises
        RepositoryNotFound."""
        ...

    def set_protection_rules(
        self,
        repo: str,
        rules: Sequence[ProtectionRule],
        *,
        expected: Sequence[ProtectionRule] | None = None,
    ) -> None:
        """Replace the repository's rules with ``rules`` (distinct patterns) in one
        transaction. With ``expected``, only when the stored rules are those (in any order):
        else PreconditionFailed, and nothing changes. Raises RepositoryNotFound."""
        ...

    # garbage-collection rules ------------------------------------------------------------------
    def get_gc_rules(self, repo: str) -> dict[str, Any] | None:
        """The retention rules the repository keeps (a JSON object), None when it keeps none.
        Raises RepositoryNotFound."""
        ...

    def set_gc_rules(self, repo: str, rules: Mapping[str, Any] | None) -> None:
        """Keep ``rules`` (a JSON object) as the repository's retention rules, replacing any;
        None removes them. Raises RepositoryNotFound."""
        ...

    # tags --------------------------------------------------------------------------------------
    def create_tag(self, repo: str, tag: Tag) -> None:
        """Raises AlreadyExists."""
        ...

    def get_tag(self, repo: str, name: str) -> Tag:
        """Raises TagNotFound."""
        ...

    def list_tags(self, repo: str) -> list[Tag]: ...

    def delete_tag(self, repo: str, name: str) -> None:
        """Raises TagNotFound."""
        ...

    # commits -----------------------------------------------------------------------------------
    def add_commit(self, repo: str, commit: Commit) -> None:
        """Insert a commit; inserting an identical ID again is a no-op (IDs are content hashes)."""
        ...

    def get_commit(self, repo: str, commit_id: str) -> Commit:
        """Raises CommitNotFound."""
        ...

    def commits_with_prefix(self, repo: str, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` commit IDs starting with ``prefix`` (for unique-prefix resolution)."""
        ...

    def iter_commits(self, repo: str) -> Iterator[Commit]:
        """Every commit of the repository (unordered); used by GC and fsck."""
        ...


class StagingStore(Protocol):
    def stage(
        self,
        repo: str,
        branch: str,
        entries: Iterable[StagedEntry],
        *,
        before_commit: Callable[[], object] | None = None,
        check: Callable[[], object] | None = None,
    ) -> str:
        """Write entries (values or tombstones; last write per key wins) under the branch's
        current staging token in one transaction; return that token. ``entries`` is consumed
        inside the transaction, which commits once it is exhausted and ``before_commit`` (if
        given) has returned: whatever iterating or ``before_commit`` raises rolls the whole
        call back. Raises BranchNotFound, or ProtectedBranch when the branch is protected or
        ProtectionRuleBlocked when a protection rule of the repository blocks writes to it
        (both checked in the same transaction).

        ``check`` (conditional writes) runs inside the transaction once the branch is locked
        and before anything is written; what it raises rolls the call back. Checks of
        concurrent calls on one branch run one at a time, each seeing what the calls before
        it staged, so a check-then-write is atomic."""
        ...

    def get_staged(self, token: str, key: bytes) -> StagedEntry | None:
        """The entry staged for ``key`` under ``token`` (possibly a tombstone), or None."""
        ...

    def iter_staged(
        self, token: str, start: bytes = b"", prefix: bytes = b"", batch_size: int = 10_000
    ) -> Iterator[StagedEntry]:
        """Entries of ``token`` with key >= start and starting with prefix, in bytewise key
        order, streamed in batches (memory bounded by ``batch_size``)."""
        ...

    def count_staged(self, token: str) -> int: ...

    def branch_view(self, repo: str, branch: str, *, entries: bool = True) -> BranchView:
        """The branch and its staged entries as of now (see the module docstring). With
        ``entries=False`` the caller only needs the branch and whether it is clean: a store
        may then skip loading the entries into memory. Raises BranchNotFound."""
        ...

    def drop_tokens(self, tokens: Sequence[str], prefix: bytes = b"") -> None:
        """Delete every entry of the given tokens (only keys under ``prefix`` when given)."""
        ...


#: ``iter_staged(token, start, prefix)``: one token's staged entries, in key order.
IterStaged = Callable[[str, bytes, bytes], Iterator[StagedEntry]]


def merge_tokens(
    iter_staged: IterStaged, tokens: Sequence[str], start: bytes = b"", prefix: bytes = b""
) -> Iterator[StagedEntry]:
    """The entries of several tokens merged by key, in key order, one per key: the entry of
    the earliest token in ``tokens`` wins (a branch's current token, then its sealed ones)."""
    if len(tokens) == 1:  # one token holds one entry per key already (a commit's usual case)
        yield from iter_staged(tokens[0], start, prefix)
        return
    streams = [_ranked(iter_staged(t, start, prefix), rank) for rank, t in enumerate(tokens)]
    last: bytes | None = None
    for key, _, entry in heapq.merge(*streams):
        if key != last:
            last = key
            yield entry


def _ranked(entries: Iterator[StagedEntry], rank: int) -> Iterator[tuple[bytes, int, StagedEntry]]:
    for e in entries:
        yield e.key, rank, e
