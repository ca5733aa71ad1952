"""Diffs between refs, and a branch's uncommitted changes, as :class:`Difference` values.

A diff between two refs compares their committed trees (:mod:`graveler.storage.committed.diff`
skips every range the two share, so the cost follows the change); the uncommitted diff
compares a branch's staged entries with its head commit. Both page by path (``after``) and
seek to a prefix.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from graveler.core import validate
from graveler.core.validate import prefix_key
from graveler.storage import entry as entries
from graveler.storage.entry import ObjectEntry
from graveler.views.context import RepoContext
from graveler.views.layers import merged_staging


class ChangeType(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True, slots=True)
class Difference:
    type: ChangeType
    path: str
    left: ObjectEntry | None
    right: ObjectEntry | None


def diff_refs(
    repo: RepoContext, left: str, right: str, *, prefix: str = "", after: str = ""
) -> Iterator[Difference]:
    """Committed differences from ``left`` to ``right`` (under ``prefix``, a plain key
    prefix: ``"tables/t/"`` for a directory), in path order, starting past the path
    ``after`` (for paging: pass the last path of the previous page). A prefix or ``after``
    seeks into both trees: the cost follows what lies under the prefix past ``after``."""
    key_prefix = prefix_key(prefix)
    start = _start_after(after)
    lc, rc = repo.resolve(left).commit, repo.resolve(right).commit
    for d in repo.committed.diff(lc.metarange_id, rc.metarange_id, key_prefix, start):
        yield Difference(
            ChangeType(d.type.value),
            d.key.decode(),
            entries.decode(d.key, d.left.value) if d.left else None,
            entries.decode(d.key, d.right.value) if d.right else None,
        )


def diff_uncommitted(
    repo: RepoContext, branch: str, *, prefix: str = "", after: str = ""
) -> Iterator[Difference]:
    """The branch's staged changes (under ``prefix``, past the path ``after``) relative to
    its head commit, in path order."""
    key_prefix = prefix_key(prefix)
    start = _start_after(after)
    b = repo.refs.get_branch(repo.name, branch)
    mid = repo.get_commit(b.commit_id).metarange_id
    for staged in merged_staging(repo.staging, b.tokens, start, key_prefix):
        committed = repo.committed.get(mid, staged.key)
        left = entries.decode(staged.key, committed.value) if committed else None
        right = entries.decode(staged.key, staged.value) if staged.value is not None else None
        path = staged.key.decode()
        if right is None and left is not None:
            yield Difference(ChangeType.REMOVED, path, left, None)
        elif right is not None and left is None:
            yield Difference(ChangeType.ADDED, path, None, right)
        elif right is not None and committed is not None and committed.identity != staged.identity:
            yield Difference(ChangeType.CHANGED, path, left, right)


def _start_after(after: str) -> bytes:
    """The smallest key past the path ``after`` (b"" when it is empty)."""
    key = prefix_key(validate.text(after, "after"))
    return key + b"\x00" if key else b""
