"""Branch protection: the repository's rules (patterns of branch names and the actions they
block, :mod:`graveler.core.protection`), and the one check every write, commit and delete
makes.

Rules live in the refs database with the repository, so a rule applies to every branch that
matches it, whichever interface made the branch and whenever. Staging writes are checked by
the staging store inside the write's own transaction (:meth:`graveler.storage.refs.port.
StagingStore.stage`); commits (commit, revert, cherry-pick, import, table commits), resets
and deletes call :func:`check_branch` before they start. A branch protected by
``protect_branch`` blocks staging writes and commits, as before. Merges into a protected
branch are allowed: that is how it changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from graveler.core.errors import (
    AlreadyExists,
    CommitToProtectedBranch,
    Conflict,
    NotFound,
    PreconditionFailed,
    WriteToProtectedBranch,
)
from graveler.core.model import Branch
from graveler.core.protection import BlockedAction, ProtectionRule, check, etag, rule, ruleset
from graveler.views.context import RepoContext

T = TypeVar("T")
#: Read-modify-write tries of one rule's change before giving up (each try is a compare).
_TRIES = 10


def protection_rules(repo: RepoContext) -> list[ProtectionRule]:
    """The repository's branch protection rules, sorted by pattern."""
    return repo.refs.get_protection_rules(repo.name)


def protection_etag(rules: list[ProtectionRule]) -> str:
    """The tag of a rule set (HTTP's ``ETag``): a replace may require it (``if_match``)."""
    return etag(rules)


def set_protection_rules(
    repo: RepoContext, rules: Iterable[ProtectionRule], *, if_match: str | None = None
) -> list[ProtectionRule]:
    """Replace the repository's rules; returns them, sorted. With ``if_match`` (an ETag of
    :func:`protection_etag`), only when the stored rules still have that tag, checked in the
    replacing transaction: else PreconditionFailed, and nothing changes. Raises
    InvalidArgument (two rules for one pattern)."""
    chosen = ruleset(rules)
    if if_match is None:
        repo.refs.set_protection_rules(repo.name, chosen)
        return chosen
    current = protection_rules(repo)
    if etag(current) != if_match:
        raise PreconditionFailed(
            f"the branch protection rules of {repo.name!r} changed since they were read"
        )
    repo.refs.set_protection_rules(repo.name, chosen, expected=current)
    return chosen


def add_protection_rule(
    repo: RepoContext, pattern: str, blocked: Iterable[str] | None = None
) -> ProtectionRule:
    """Add a rule for ``pattern`` (blocking ``blocked``; default: staging writes and
    commits). Raises AlreadyExists when the pattern has a rule, InvalidArgument for a bad
    pattern or action."""
    new = rule(pattern, blocked)

    def attempt() -> ProtectionRule:
        current = protection_rules(repo)
        if any(r.pattern == new.pattern for r in current):
            raise AlreadyExists(f"a branch protection rule for {pattern!r} already exists")
        _replace(repo, [*current, new], current)
        return new

    return _retried(attempt, f"add a branch protection rule to {repo.name!r}")


def delete_protection_rule(repo: RepoContext, pattern: str) -> None:
    """Remove the rule for ``pattern``; raises NotFound when there is none."""

    def attempt() -> None:
        current = protection_rules(repo)
        kept = [r for r in current if r.pattern != pattern]
        if len(kept) == len(current):
            raise NotFound(f"no branch protection rule for {pattern!r} in {repo.name!r}")
        _replace(repo, kept, current)

    _retried(attempt, f"remove a branch protection rule of {repo.name!r}")


class _Changed(Exception):
    """The rules changed between a read and the replace that depended on it."""


def _replace(repo: RepoContext, rules: list[ProtectionRule], read: list[ProtectionRule]) -> None:
    """Replace the rules if they are still ``read`` (else _Changed: read them again)."""
    try:
        repo.refs.set_protection_rules(repo.name, rules, expected=read)
    except PreconditionFailed:
        raise _Changed from None


def _retried(attempt: Callable[[], T], what: str) -> T:
    for _ in range(_TRIES):
        try:
            return attempt()
        except _Changed:
            continue
    raise Conflict(f"{what}: the rules kept changing under us; retry")


def check_branch(repo: RepoContext, branch: Branch, action: BlockedAction) -> None:
    """Refuse ``action`` on ``branch`` when it is protected by its own flag (staging writes:
    WriteToProtectedBranch, commits: CommitToProtectedBranch) or by a rule of the repository
    (ProtectionRuleBlocked, naming the rule)."""
    if branch.protected and action is BlockedAction.STAGING_WRITE:
        raise WriteToProtectedBranch(
            f"branch {branch.name!r} is protected: write to another branch and merge into it"
        )
    if branch.protected and action is BlockedAction.COMMIT:
        raise CommitToProtectedBranch(f"branch {branch.name!r} is protected: merge into it instead")
    check(protection_rules(repo), branch.name, action)


def check_action(repo: RepoContext, name: str, action: BlockedAction) -> Branch:
    """:func:`check_branch` on the branch ``name`` as it is now; returns its row. Raises
    BranchNotFound."""
    b = repo.refs.get_branch(repo.name, name)
    check_branch(repo, b, action)
    return b
