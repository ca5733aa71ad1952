"""The run-branch lifecycle: one pipeline run writes on its own branch and is published into
its target exactly once.

A :class:`Run` names the run (``identity``, stable across retries and clears of the same run),
its branch and its target. The steps, each safe to repeat:

* :func:`open_run` creates the branch (from the target, or another source) or reuses it;
* :func:`commit_pending` commits what is staged on the branch, if anything;
* :func:`publish` commits what is pending, merges the branch into the target with the run's
  identity in the merge commit's metadata (:data:`RUN_KEY`), then deletes the branch;
* :func:`discard` deletes the branch of a run that will not be published;
* :func:`retire` deletes the branch of an earlier attempt whose writes a later publication
  contains (a failed run continued by a re-execution), and keeps one that holds more;
* :func:`prune` deletes kept run branches (recognised by their name prefix) idle for longer
  than a given age.

Publishing is idempotent per run: before merging, :func:`publish` looks in the target's
first-parent history for a merge commit carrying this run's identity and returns it instead
of merging again (``Publication.replayed``), so a retried or cleared publish never merges
twice unless asked to (``again=True``). A merge conflict keeps the branch (its commits are
the user's data) and says so in the error.

Orchestrator adapters (Airflow, Dagster), ``Repository.transaction`` and the Spark commit path
use these functions and add only naming and lineage metadata.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from graveler.core.errors import (
    AlreadyExists,
    BranchNotFound,
    InvalidArgument,
    MergeConflict,
    NoChanges,
    NotFastForward,
    RefNotFound,
)
from graveler.core.model import Branch, Commit, MergeResult
from graveler.versioning import branches
from graveler.versioning import commit as committing
from graveler.versioning import merge as merges
from graveler.views.context import RepoContext
from graveler.views.diff import diff_uncommitted
from graveler.views.history import first_parent_log, merge_base
from graveler.views.layers import token_issued_at

#: Commit metadata key holding the identity of the run a merge commit published.
RUN_KEY = ".graveler.run"
#: How far back :func:`find_publication` looks when the caller gives no ``since``.
DEFAULT_SEARCH_DEPTH = 1000
#: Commits are stamped by the clock of the machine that made them; a search bounded by
#: ``since`` looks this much further back.
CLOCK_SKEW = timedelta(minutes=15)


@dataclass(frozen=True, slots=True)
class Run:
    """One pipeline run: ``identity`` is unique per run and the same for every attempt of it
    (``airflow/<dag>/<run id>``, a Dagster run ID...); ``branch`` is where it writes;
    ``into`` is the branch it is published into."""

    identity: str
    branch: str
    into: str


@dataclass(frozen=True, slots=True)
class Publication:
    """What :func:`publish` did. ``merge`` is None when there was nothing to publish (no
    branch, or a branch without changes). ``replayed`` is True when an earlier attempt had
    already published the run and nothing was merged now; ``branch_kept`` is then True when
    this attempt wrote something new on the branch, which is kept (never silently dropped)."""

    run: Run
    merge: MergeResult | None
    replayed: bool = False
    branch_kept: bool = False


def open_run(repo: RepoContext, run: Run, source: str | None = None) -> tuple[Branch, bool]:
    """The run's branch, created from ``source`` (default: the target) unless it exists;
    returns it and whether this call created it. Concurrent calls for one run agree."""
    with contextlib.suppress(BranchNotFound):
        return branches.get_branch(repo, run.branch), False
    try:
        return branches.create_branch(repo, run.branch, source or run.into), True
    except AlreadyExists:  # another attempt of the same run won the race
        return branches.get_branch(repo, run.branch), False


def commit_pending(
    repo: RepoContext,
    run: Run,
    message: str,
    *,
    metadata: Mapping[str, str] | None = None,
    committer: str | None = None,
) -> Commit | None:
    """Commit what is staged on the run's branch (with the run's identity in the metadata);
    None when nothing is staged."""
    meta = {**(metadata or {}), RUN_KEY: run.identity}
    try:
        return committing.commit(repo, run.branch, message, metadata=meta, committer=committer)
    except NoChanges:
        return None


def find_publication(
    repo: RepoContext, run: Run, *, since: datetime | None = None, depth: int | None = None
) -> Commit | None:
    """The commit on the target's first-parent history that published ``run``, or None. The
    search stops at commits older than ``since`` (when given: the run's start; allowing for
    :data:`CLOCK_SKEW`) or after ``depth`` commits (default :data:`DEFAULT_SEARCH_DEPTH`)."""
    head = repo.get_commit(branches.get_branch(repo, run.into).commit_id)
    limit = depth if depth is not None else DEFAULT_SEARCH_DEPTH
    horizon = since - CLOCK_SKEW if since is not None else None
    for commit in first_parent_log(repo.get_commit, head, limit):
        if horizon is not None and commit.creation_date < horizon:
            return None
        if commit.metadata.get(RUN_KEY) == run.identity:
            return commit
    return None


def publish(
    repo: RepoContext,
    run: Run,
    message: str,
    *,
    metadata: Mapping[str, str] | None = None,
    committer: str | None = None,
    strategy: str | None = None,
    since: datetime | None = None,
    again: bool = False,
    keep_branch: bool = False,
    fast_forward: bool | None = None,
    ff_only: bool = False,
    squash: bool = False,
    allow_empty: bool = False,
    table_strategy: str | None = merges.SAME_STRATEGY,
) -> Publication:
    """Publish ``run``: commit its pending writes, merge its branch into the target (a merge
    commit carrying ``metadata`` and the run's identity; with ``fast_forward``, by default
    only with ``ff_only``, an unchanged target simply moves to the run's last commit), delete
    the branch (unless ``keep_branch``). Idempotent (see the module docstring); ``again``
    merges even when an earlier publication is found. ``ff_only``, ``squash`` and
    ``allow_empty`` are the merge options of :mod:`graveler.versioning.merge`: publish only by
    fast-forward; one commit whose only parent is the target's head; a merge commit recording
    the run even when it wrote nothing new. ``strategy`` and ``table_strategy`` as in
    :func:`graveler.versioning.merge.merge`. Raises MergeConflict (branch kept; a TableConflict for
    a table whose format refuses the merge),
    NotFastForward (``ff_only``; branch kept), DirtyBranch when the target has uncommitted
    changes, BranchNotFound when the target does not exist, InvalidArgument for contradictory
    options.

    A replayed publication reports ``before`` as the published commit's first parent: exact
    for a merge commit, the run's base for a fast-forward of a single commit."""
    if not again:
        earlier = _replay(repo, run, since)
        if earlier is not None:
            return earlier
    meta = {**(metadata or {}), RUN_KEY: run.identity}
    ff = ff_only if fast_forward is None else fast_forward
    options = merges.MergeOptions(ff, ff_only, squash, allow_empty)  # checked before anything
    try:
        commit_pending(repo, run, f"{message}: pending writes", metadata=meta, committer=committer)
        strategies = (strategy, table_strategy)
        merged = _merge(repo, run, message, meta, committer, strategies, options)
    except (BranchNotFound, RefNotFound):
        branches.get_branch(repo, run.into)  # a missing target is the caller's error
        merged, vanished = None, True  # no run branch, or a concurrent attempt removed it
    else:
        vanished = False
    if merged is None and not again:
        earlier = _replay(repo, run, since)  # a concurrent attempt may have just published it
        if earlier is not None:
            return earlier
    if not keep_branch and not vanished:
        discard(repo, run)
    return Publication(run, merged)


def _merge(
    repo: RepoContext,
    run: Run,
    message: str,
    meta: dict[str, str],
    committer: str | None,
    strategies: tuple[str | None, str | None],
    options: merges.MergeOptions,
) -> MergeResult | None:
    """Merge the run's branch into its target; None when it holds nothing new."""
    try:
        return merges.merge(
            repo,
            run.branch,
            run.into,
            strategy=strategies[0],
            table_strategy=strategies[1],
            message=message,
            metadata=meta,
            committer=committer,
            fast_forward=options.fast_forward,
            ff_only=options.ff_only,
            squash=options.squash,
            allow_empty=options.allow_empty,
        )
    except NoChanges:
        return None
    except (MergeConflict, NotFastForward) as exc:
        exc.add_note(f"the run's writes are kept on branch {run.branch!r}; nothing was published")
        raise


def _replay(repo: RepoContext, run: Run, since: datetime | None) -> Publication | None:
    """The publication an earlier attempt made, or None. A leftover branch is deleted when
    everything on it was published; one holding newer writes is kept."""
    found = find_publication(repo, run, since=since)
    if found is None:
        return None
    kept = _holds_unpublished(repo, run, found)
    if not kept:
        discard(repo, run)
    before = repo.get_commit(found.parents[0])
    return Publication(run, MergeResult(before, found), replayed=True, branch_kept=kept)


def _holds_unpublished(repo: RepoContext, run: Run, published: Commit) -> bool:
    """Whether the run's branch exists and holds something neither ``published`` nor the
    target's head contains: staged writes that change the branch (rewriting identical bytes
    changes nothing), or commits of its own (a branch forked from the target's newer head,
    as a cleared run's is, has none). A branch that a concurrent publication deletes
    meanwhile holds nothing."""
    try:
        branch = branches.get_branch(repo, run.branch)
        if branch.sealed_tokens:  # a commit is in progress
            return True
        if next(iter(diff_uncommitted(repo, run.branch)), None) is not None:
            return True
    except (BranchNotFound, RefNotFound):
        return False
    head = repo.get_commit(branch.commit_id)
    target = repo.get_commit(branches.get_branch(repo, run.into).commit_id)
    return not any(_contains(repo, tip, head) for tip in (published, target))


def _contains(repo: RepoContext, tip: Commit, commit: Commit) -> bool:
    """Whether ``commit`` is ``tip`` or one of its ancestors."""
    base = merge_base(repo.get_commit, tip, commit)
    return base is not None and base.id == commit.id


def discard(repo: RepoContext, run: Run) -> bool:
    """Delete the run's branch and its staged writes; False when there was none."""
    try:
        branches.delete_branch(repo, run.branch)
    except BranchNotFound:
        return False
    return True


def retire(repo: RepoContext, run: Run, published: Commit) -> bool:
    """Delete the run's branch when everything on it is contained in ``published`` or in
    the target (no staged writes that change the branch, and its head is an ancestor of
    either); True when deleted. A branch holding anything else is kept: its writes are the
    user's."""
    if _holds_unpublished(repo, run, published):
        return False
    return discard(repo, run)


# --- kept run branches ---------------------------------------------------------------------------

_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@dataclass(frozen=True, slots=True)
class StaleBranch:
    """A branch :func:`prune` found idle: its name, head commit and the time it was created or
    last committed to (whichever is later)."""

    name: str
    commit_id: str
    idle_since: datetime


def parse_age(text: str | int | float | timedelta) -> timedelta:
    """An age from a timedelta, a number of seconds or text such as ``"90s"``, ``"30m"``,
    ``"12h"``, ``"7d"``, ``"2w"`` (a number without a unit counts seconds). Raises
    InvalidArgument for anything else, and for a negative age."""
    if isinstance(text, timedelta):
        age = text
    elif isinstance(text, int | float) and not isinstance(text, bool):
        age = timedelta(seconds=text)
    else:
        raw = str(text).strip().lower()
        unit = raw[-1:] if raw[-1:] in _AGE_UNITS else "s"
        number = raw[:-1] if raw[-1:] in _AGE_UNITS else raw
        try:
            age = timedelta(seconds=float(number) * _AGE_UNITS[unit])
        except (ValueError, OverflowError):
            raise InvalidArgument(
                f"invalid age {str(text)[:40]!r}: use a number with s, m, h, d or w (e.g. 7d)"
            ) from None
    if age < timedelta(0):
        raise InvalidArgument(f"an age cannot be negative (got {text!r})")
    return age


def stale_branches(
    repo: RepoContext, *, prefix: str, older_than: timedelta, now: datetime | None = None
) -> list[StaleBranch]:
    """Branches whose name starts with ``prefix`` (the run branches of one adapter, such as
    ``airflow-``) that nobody created or committed to for longer than ``older_than``.

    Never listed: the default branch, protected branches and branches with a commit in
    progress. A branch's idle time starts when it was created or last committed to (its
    staging token's issue time; the head commit's date for tokens without one); writes that
    were staged but not committed do not restart it. Raises InvalidArgument for an empty
    prefix (that would select every branch)."""
    if not prefix:
        raise InvalidArgument("pruning needs a branch name prefix, e.g. 'airflow-'")
    horizon = (now or datetime.now(UTC)) - older_than
    found = []
    for branch in branches.list_branches(repo):
        if not _prunable(repo, branch, prefix):
            continue
        since = _idle_since(repo, branch)
        if since < horizon:
            found.append(StaleBranch(branch.name, branch.commit_id, since))
    return found


def prune(
    repo: RepoContext,
    *,
    prefix: str,
    older_than: timedelta,
    now: datetime | None = None,
    dry_run: bool = False,
) -> list[StaleBranch]:
    """Delete the branches :func:`stale_branches` finds (with ``dry_run``, only list them);
    returns those deleted. A branch committed to since it was listed is left alone, as is
    one already gone. Their commits stay readable by ID until garbage collection."""
    stale = stale_branches(repo, prefix=prefix, older_than=older_than, now=now)
    if dry_run:
        return stale
    deleted = []
    for found in stale:
        try:
            current = branches.get_branch(repo, found.name)
            if (
                current.commit_id != found.commit_id
                or _idle_since(repo, current) != found.idle_since
            ):
                continue  # used again meanwhile
            branches.delete_branch(repo, found.name)
        except BranchNotFound:
            continue
        deleted.append(found)
    return deleted


def _prunable(repo: RepoContext, branch: Branch, prefix: str) -> bool:
    return (
        branch.name.startswith(prefix)
        and branch.name != repo.info.default_branch
        and not branch.protected
        and not branch.sealed_tokens
    )


def _idle_since(repo: RepoContext, branch: Branch) -> datetime:
    issued = token_issued_at(branch.staging_token)
    return issued if issued is not None else repo.get_commit(branch.commit_id).creation_date
