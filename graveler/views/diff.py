"""Diffs between refs, and a branch's uncommitted changes, as :class:`Difference` values.

A diff between two refs compares their committed trees (:mod:`graveler.storage.committed.diff`
skips every range the two share, so the cost follows the change); the uncommitted diff
compares a branch's staged entries with its head commit. All page by path (``after``) and
seek to a prefix.

A three-dot diff (:func:`diff_three_dot`, lakeFS's default diff of two refs) says what merging
the right ref into the left one would change on the left: the paths the right side changed
since the merge base and the left side did not, and as ``conflict`` the paths both sides
changed, each in its own way. Paths only the left side changed, or both changed alike, are
not listed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from graveler.core import validate
from graveler.core.errors import NotFound
from graveler.core.validate import prefix_key
from graveler.storage import entry as entries
from graveler.storage.committed.diff import DiffEntry
from graveler.storage.entry import ObjectEntry
from graveler.views.context import RepoContext
from graveler.views.history import merge_base
from graveler.views.layers import merged_staging


class ChangeType(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    CONFLICT = "conflict"  # three-dot diffs only: both sides changed the path differently


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


def diff_three_dot(
    repo: RepoContext, left: str, right: str, *, prefix: str = "", after: str = ""
) -> Iterator[Difference]:
    """What merging ``right`` into ``left`` would change on ``left``, and the conflicts it
    would meet (see the module docstring), under ``prefix`` and past ``after`` as
    :func:`diff_refs`. A change's type says what happens to the path on ``left`` (added,
    removed, changed); a conflict carries both sides' entries. Raises NotFound when the two
    refs have no common ancestor."""
    key_prefix = prefix_key(prefix)
    start = _start_after(after)
    lc, rc = repo.resolve(left).commit, repo.resolve(right).commit
    base = merge_base(repo.get_commit, lc, rc)
    if base is None:
        raise NotFound(f"{left!r} and {right!r} have no common ancestor")
    for d in repo.committed.diff(lc.metarange_id, rc.metarange_id, key_prefix, start):
        at_base = repo.committed.get(base.metarange_id, d.key)
        kind = _three_dot_type(d, None if at_base is None else at_base.identity)
        if kind is not None:
            yield Difference(
                kind,
                d.key.decode(),
                entries.decode(d.key, d.left.value) if d.left else None,
                entries.decode(d.key, d.right.value) if d.right else None,
            )


def _three_dot_type(d: DiffEntry, base: bytes | None) -> ChangeType | None:
    """How a difference between left and right reads against the merge base (``base``: the
    path's identity there, None when absent): the right side's change, a conflict, or None
    when only the left side changed the path."""
    left = d.left.identity if d.left else None
    right = d.right.identity if d.right else None
    if left == base:  # only the right side changed it
        return ChangeType(d.type.value)
    if right == base:  # only the left side changed it
        return None
    return ChangeType.CONFLICT  # both changed it, differently (they differ from each other)


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
