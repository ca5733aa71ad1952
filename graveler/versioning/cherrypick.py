"""Cherry-pick and revert: apply the change a commit made (or its inverse) on a branch.

Both are three-way merges onto the branch head committed as a single-parent commit:

* cherry-pick merges the picked commit into the head with its parent as the base;
* revert merges the reverted commit's parent into the head with the commit as the base.

For a merge commit the caller names the parent (``parent_number``, 1-based) that the change is
measured against. The branch must have no uncommitted changes and must not be protected.
As in lakeFS, a cherry-pick commit keeps the picked commit's message and metadata (unless
overridden) and adds ``cherry-pick-origin`` / ``cherry-pick-committer``; a revert commit says
which commit it reverted under ``.graveler.revert.commit``. Overriding ``metadata`` replaces
the user metadata; those keys are added after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graveler.core import validate
from graveler.core.errors import DirtyBranch, InvalidArgument, NoChanges, ProtectedBranch
from graveler.core.hookevents import EventRecord, HookEvent
from graveler.core.model import EMPTY_METARANGE_ID, Branch, Commit
from graveler.versioning.commit import _committer, advance_branch, retry_moved
from graveler.views.context import RepoContext, hooked
from graveler.views.history import make_commit
from graveler.views.resolve import resolve_commit

REVERT_KEY = ".graveler.revert.commit"
CHERRY_PICK_ORIGIN = "cherry-pick-origin"
CHERRY_PICK_COMMITTER = "cherry-pick-committer"


@dataclass(frozen=True, slots=True)
class _Change:
    """A change to commit on a branch: merge ``source`` onto the head with base ``base``."""

    base: str
    source: str
    message: str
    metadata: dict[str, str]
    event: HookEvent
    origin: str  # the ref the operation was given, for hooks


def cherry_pick(
    repo: RepoContext,
    branch: str,
    ref: str,
    *,
    parent_number: int | None = None,
    message: str | None = None,
    metadata: Mapping[str, str] | None = None,
    committer: str | None = None,
    allow_empty: bool = False,
) -> Commit:
    """Commit on ``branch`` the changes that ``ref``'s commit made relative to its parent
    (``parent_number``, required for a merge commit). Raises InvalidArgument (bad parent
    number), DirtyBranch, ProtectedBranch, MergeConflict, NoChanges (nothing to apply
    unless ``allow_empty``), HookAborted."""
    picked = resolve_commit(repo, ref)
    parent = _parent(repo, picked, ref, parent_number, "cherry-pick")
    if parent is None:
        raise InvalidArgument(f"{ref!r} is the repository's first commit; it has no parent")
    meta = dict(picked.metadata) if metadata is None else validate.metadata(metadata)
    meta[CHERRY_PICK_ORIGIN] = picked.id
    meta[CHERRY_PICK_COMMITTER] = picked.committer
    change = _Change(
        base=parent.metarange_id,
        source=picked.metarange_id,
        message=_message(message, picked.message),
        metadata=meta,
        event=HookEvent.PRE_CHERRY_PICK,
        origin=ref,
    )
    return _commit_change(repo, branch, change, _committer(committer), allow_empty)


def revert(
    repo: RepoContext,
    branch: str,
    ref: str,
    *,
    parent_number: int | None = None,
    message: str | None = None,
    metadata: Mapping[str, str] | None = None,
    committer: str | None = None,
    allow_empty: bool = False,
) -> Commit:
    """Commit on ``branch`` the inverse of the changes ``ref``'s commit made relative to its
    parent (``parent_number``, required for a merge commit). The message defaults to
    ``Revert <id>: <message>``. Raises like :func:`cherry_pick`; reverting a commit that
    changed nothing raises NoChanges unless ``allow_empty``."""
    target = resolve_commit(repo, ref)
    parent = _parent(repo, target, ref, parent_number, "revert")
    meta = {} if metadata is None else validate.metadata(metadata)
    meta[REVERT_KEY] = target.id
    change = _Change(
        base=target.metarange_id,
        source=parent.metarange_id if parent is not None else EMPTY_METARANGE_ID,
        message=_message(message, f"Revert {target.id[:12]}: {target.message}"),
        metadata=meta,
        event=HookEvent.PRE_REVERT,
        origin=ref,
    )
    return _commit_change(repo, branch, change, _committer(committer), allow_empty)


def _commit_change(
    repo: RepoContext, branch: str, change: _Change, who: str, allow_empty: bool
) -> Commit:
    what = change.event.value[4:]

    def attempt() -> Commit:
        b = clean_branch(repo, branch, what)
        head = repo.get_commit(b.commit_id)
        mr, _ = repo.committed.merge(change.base, change.source, head.metarange_id)
        if mr == head.metarange_id and not allow_empty:
            raise NoChanges(f"{what} of {change.origin!r} changes nothing on {branch!r}")
        proposed = make_commit([head], mr, change.message, who, change.metadata)
        event = EventRecord(change.event, proposed, branch=branch, source_ref=change.origin)
        with hooked(repo, event):
            new = advance_branch(repo, b, proposed)
        return new

    return retry_moved(attempt, f"{what} on {branch!r}")


def clean_branch(repo: RepoContext, name: str, what: str) -> Branch:
    """The branch row, if it is not protected and has no uncommitted changes."""
    b = repo.refs.get_branch(repo.name, name)
    if b.protected:
        raise ProtectedBranch(f"cannot {what} on {name!r}: the branch is protected")
    if b.sealed_tokens or repo.staging.count_staged(b.staging_token) > 0:
        raise DirtyBranch(
            f"cannot {what} on {name!r}: it has uncommitted changes; commit or reset them first"
        )
    return b


def _parent(
    repo: RepoContext, commit: Commit, ref: str, number: int | None, what: str
) -> Commit | None:
    """The parent a change is measured against (None for the parentless first commit)."""
    if number is not None and (isinstance(number, bool) or not isinstance(number, int)):
        raise InvalidArgument(f"parent_number must be an integer, got {number!r}")
    if len(commit.parents) > 1 and number is None:
        raise InvalidArgument(f"{ref!r} is a merge commit: pass parent_number to {what} it")
    if number is not None and not 1 <= number <= max(len(commit.parents), 1):
        raise InvalidArgument(f"{ref!r} has no parent number {number}")
    if not commit.parents:
        return None
    return repo.get_commit(commit.parents[(number or 1) - 1])


def _message(override: str | None, default: str) -> str:
    if override is None:
        return default
    if not isinstance(override, str) or not override.strip():
        raise InvalidArgument("a commit message override must be a non-empty string")
    return validate.text(override, "commit message")
