"""Staging-only reads: what is staged on a branch and not committed (lakeFS's ``StageOnly``).

An entry counts as staged when the branch's staging area (current token, then sealed tokens
newest first) holds a value for its path that differs from the branch's head commit. A path
staged as deleted, or staged with exactly the committed entry (same identity), is not: as in
lakeFS, :func:`stat_staged` then raises ObjectNotFound. Staged deletions are listed by
``diff_uncommitted``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from graveler.core import validate
from graveler.core.errors import ObjectNotFound
from graveler.storage import entry as entries
from graveler.storage.committed.record import ValueRecord
from graveler.storage.entry import ObjectEntry
from graveler.views.context import RepoContext
from graveler.views.layers import merged_staging, staged_lookup
from graveler.views.listing import ListingPage, iter_entries, list_entries
from graveler.views.reads import read_entry


def stat_staged(repo: RepoContext, branch: str, path: str) -> ObjectEntry:
    """The entry staged at ``path`` on ``branch``; ObjectNotFound when nothing (or a
    deletion, or the committed entry itself) is staged there. Raises BranchNotFound."""
    key = validate.object_key(path)
    b = repo.refs.get_branch(repo.name, branch)
    staged = staged_lookup(repo.staging, b.tokens, key)
    if staged is None or staged.value is None or staged.identity is None:
        raise ObjectNotFound(f"nothing staged at {path!r} on branch {branch!r}")
    committed = repo.committed.get(repo.get_commit(b.commit_id).metarange_id, key)
    if committed is not None and committed.identity == staged.identity:
        raise ObjectNotFound(f"{path!r} on branch {branch!r} is staged as committed")
    return entries.decode(key, staged.value)


def get_staged(repo: RepoContext, branch: str, path: str) -> bytes:
    """The bytes of the entry :func:`stat_staged` finds (verified)."""
    return read_entry(repo, stat_staged(repo, branch, path))


def iter_staged(
    repo: RepoContext, branch: str, prefix: str = "", after: str = ""
) -> Iterator[ObjectEntry]:
    """Every staged entry under ``prefix`` (after ``after``), in path order."""
    return iter_entries(partial(_records, repo, branch), prefix, after)


def list_staged(
    repo: RepoContext,
    branch: str,
    prefix: str = "",
    *,
    delimiter: str | None = "/",
    after: str = "",
    amount: int = 1000,
) -> ListingPage:
    """One page of staged entries and common prefixes, like ``Repository.list``."""
    return list_entries(partial(_records, repo, branch), prefix, delimiter, after, amount)


def _records(repo: RepoContext, branch: str, prefix: bytes, after: bytes) -> Iterator[ValueRecord]:
    """Staged values under ``prefix`` with keys greater than ``after`` that differ from the
    head commit."""
    b = repo.refs.get_branch(repo.name, branch)
    mid = repo.get_commit(b.commit_id).metarange_id
    start = after + b"\x00" if after else b""
    for staged in merged_staging(repo.staging, b.tokens, start, prefix):
        if staged.value is None or staged.identity is None:
            continue
        committed = repo.committed.get(mid, staged.key)
        if committed is None or committed.identity != staged.identity:
            yield ValueRecord(staged.key, staged.identity, staged.value)
