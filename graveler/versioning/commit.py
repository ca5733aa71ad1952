"""Committing on a branch, and the one way a branch moves: a compare-and-swap on its row.

Branch moves are compare-and-swaps on the branch row, retried with exponential backoff and
jitter (:func:`update_branch`, :func:`advance_branch`). A commit first *seals* the staging
token (new writes go to a fresh token), builds the tree from the sealed tokens over the
parent, then swaps the branch to the new commit. Writes that arrive meanwhile are never lost:
they sit in the fresh token for the next commit. :func:`import_entries` commits entries
straight over the head, bypassing staging (the bulk-import path).

Related: diffs in :mod:`graveler.views.diff`, resets in :mod:`graveler.versioning.reset`,
merges in :mod:`graveler.versioning.merge`, revert and cherry-pick in
:mod:`graveler.versioning.cherrypick`.
"""

from __future__ import annotations

import getpass
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import TypeVar

from graveler.core import validate
from graveler.core.errors import BranchMoved, InvalidArgument, NoChanges
from graveler.core.hookevents import EventRecord, HookEvent
from graveler.core.model import Branch, Commit
from graveler.core.protection import BlockedAction
from graveler.core.validate import written_key as validate_key
from graveler.storage.committed.apply import Change
from graveler.storage.committed.merge import MergeStrategy
from graveler.storage.entry import ObjectEntry
from graveler.storage.objects import checked_entry
from graveler.versioning.protection import check_branch
from graveler.views.context import RepoContext, hooked
from graveler.views.history import make_commit
from graveler.views.layers import as_changes, merged_staging, new_staging_token

T = TypeVar("T")
MAX_TRIES = 10
MAX_BACKOFF_SECONDS = 2.0


def default_committer() -> str:
    name = os.environ.get("GRAVELER_COMMITTER")
    if name:
        return name
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def retry_moved(attempt: Callable[[], T], what: str) -> T:
    """Run ``attempt`` until it stops raising BranchMoved (bounded, exponential backoff)."""
    delay = 0.01
    for n in range(MAX_TRIES):
        try:
            return attempt()
        except BranchMoved:
            if n == MAX_TRIES - 1:
                raise BranchMoved(
                    f"{what}: the branch kept moving under us after {MAX_TRIES} tries; "
                    "retry the operation"
                ) from None
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, MAX_BACKOFF_SECONDS)
    raise AssertionError("unreachable")


def update_branch(
    repo: RepoContext,
    name: str,
    change: Callable[[Branch], Branch],
    first: Branch | None = None,
    *,
    durable: bool = True,
) -> Branch:
    """Apply ``change`` to the branch row with compare-and-swap retries. ``first`` is a row
    read just before (a branch view's): the first attempt swaps from it without reading.
    ``durable`` as in :meth:`graveler.storage.refs.port.RefStore.update_branch`."""
    pending = [] if first is None else [first]

    def attempt() -> Branch:
        current = pending.pop() if pending else repo.refs.get_branch(repo.name, name)
        new = change(current)
        repo.refs.update_branch(repo.name, current, new, durable=durable)
        return new

    return retry_moved(attempt, f"update branch {name!r}")


def advance_branch(
    repo: RepoContext, expected: Branch, commit: Commit, *, record: bool = True, **changes: object
) -> Commit:
    """Move branch ``expected`` to ``commit`` with one compare-and-swap (raising BranchMoved
    when the row changed since ``expected`` was read). ``commit`` is stored in the same
    transaction unless ``record`` is False (it is known to exist, as in a fast-forward);
    ``changes`` are further branch fields to set in the same swap (``sealed_tokens=()`` after
    a commit)."""
    moved = replace(expected, commit_id=commit.id, **changes)  # type: ignore[arg-type]
    repo.refs.advance_branch(repo.name, expected, moved, commit if record else None)
    return commit


# --- commit -------------------------------------------------------------------------------------


def commit(
    repo: RepoContext,
    branch: str,
    message: str,
    *,
    metadata: Mapping[str, str] | None = None,
    committer: str | None = None,
    allow_empty: bool = False,
    date: datetime | None = None,
    allow_empty_message: bool = False,
) -> Commit:
    """Commit the branch's staged changes: seal its staging token (new writes go to a fresh
    one), build the tree over its head, and move it there in one transaction that also
    records the commit. ``date`` (timezone-aware) replaces the commit's creation date, as
    lakeFS's ``date`` does. A message must hold more than whitespace unless
    ``allow_empty_message`` (lakeFS's API takes any message). Raises NoChanges,
    ProtectedBranch (ProtectionRuleBlocked when a rule of the repository blocks commits on
    the branch), BranchNotFound."""
    if not isinstance(message, str) or not (message.strip() or allow_empty_message):
        raise InvalidArgument("a commit needs a non-empty message (-m MESSAGE)")
    validate.text(message, "commit message")
    meta = validate.metadata(metadata)
    who = _committer(committer)
    if date is not None and (not isinstance(date, datetime) or date.tzinfo is None):
        raise InvalidArgument("a commit date must be a timezone-aware datetime")
    view = repo.staging.branch_view(repo.name, branch, entries=False)
    check_branch(repo, view.branch, BlockedAction.COMMIT)
    if view.clean and not allow_empty:
        raise NoChanges(f"branch {branch!r} has no uncommitted changes")
    # The seal needs no fsync of its own: the branch move that ends the commit is durable and
    # makes it durable too; a seal lost with a power loss leaves the changes staged, as before.
    seal = partial(_seal, repo.name)
    sealed = [update_branch(repo, branch, seal, view.branch, durable=False)]

    def attempt() -> Commit:
        b = sealed.pop() if sealed else repo.refs.get_branch(repo.name, branch)
        return _commit_sealed(repo, b, (message, meta, who, date), allow_empty)

    return retry_moved(attempt, f"commit {branch!r}")


def _seal(repo_name: str, b: Branch) -> Branch:
    """Move the staging token to the front of the sealed tokens; writes go to a fresh one."""
    token = new_staging_token(repo_name, b.name)
    return replace(b, staging_token=token, sealed_tokens=b.tokens)


def _commit_sealed(
    repo: RepoContext,
    b: Branch,
    fields: tuple[str, dict[str, str], str, datetime | None],
    allow_empty: bool,
) -> Commit:
    """Build the tree of ``b``'s sealed tokens over its commit and move ``b`` to it;
    ``fields``: the commit's message, metadata, committer and date (None: now)."""
    message, meta, who, date = fields
    parent = repo.get_commit(b.commit_id)
    changes = as_changes(merged_staging(repo.staging, b.sealed_tokens))
    metarange_id, _ = repo.committed.apply(parent.metarange_id, changes)
    if metarange_id == parent.metarange_id and not allow_empty:
        raise NoChanges(f"branch {b.name!r}: the staged changes do not change anything")
    proposed = make_commit([parent], metarange_id, message, who, meta, date)
    event = EventRecord(HookEvent.PRE_COMMIT, proposed, branch=b.name, source_ref=b.name)
    with hooked(repo, event):
        new = advance_branch(repo, b, proposed, sealed_tokens=())
        repo.staging.drop_tokens(b.sealed_tokens)
    return new


def import_entries(
    repo: RepoContext,
    branch: str,
    entries: Iterable[ObjectEntry],
    message: str,
    *,
    metadata: Mapping[str, str] | None = None,
    committer: str | None = None,
) -> Commit:
    """Commit ``entries`` (sorted by path, no duplicates) straight over the branch head,
    bypassing staging: the bulk-import path. Existing objects at those paths are replaced; the
    branch's staged changes stay staged. Raises NoChanges when nothing changes.

    The tree is built once over the head read at the start (``entries`` is consumed once). If
    the branch moves meanwhile, the import is three-way merged into the new head (base: the old
    head; imported entries win), so nothing committed concurrently is lost."""
    if not message or not isinstance(message, str) or not message.strip():
        raise InvalidArgument("an import needs a non-empty message")
    validate.text(message, "commit message")
    meta = validate.metadata(metadata)
    who = _committer(committer)
    start = repo.refs.get_branch(repo.name, branch)
    check_branch(repo, start, BlockedAction.COMMIT)
    base = repo.get_commit(start.commit_id).metarange_id
    changes = (Change(e.key, e.to_record()) for e in _validated(repo, entries))
    imported, _ = repo.committed.apply(base, changes)
    if imported == base:
        raise NoChanges(f"importing into {branch!r} changes nothing")

    def attempt() -> Commit:
        b = repo.refs.get_branch(repo.name, branch)
        head = repo.get_commit(b.commit_id)
        tree = imported
        if head.metarange_id != base:
            tree, _ = repo.committed.merge(
                base, imported, head.metarange_id, MergeStrategy.SOURCE_WINS
            )
        proposed = make_commit([head], tree, message, who, meta)
        event = EventRecord(HookEvent.PRE_COMMIT, proposed, branch=branch, source_ref=branch)
        with hooked(repo, event):
            new = advance_branch(repo, b, proposed)
        return new

    return retry_moved(attempt, f"import into {branch!r}")


def _validated(repo: RepoContext, entries: Iterable[ObjectEntry]) -> Iterator[ObjectEntry]:
    for e in entries:
        validate_key(e.path)
        if e.external:
            raise InvalidArgument(f"entry {e.path!r} has an external address; use import_data")
        yield checked_entry(repo.info.storage_namespace, e)


def _committer(committer: str | None) -> str:
    """The given committer (checked like any user text), or the default one."""
    if committer is not None:
        validate.text(committer, "committer")
    return committer or default_committer()
