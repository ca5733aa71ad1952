"""Branch protection rules: a pattern of branch names and the actions it blocks.

A repository keeps a set of rules (in the refs database, one per pattern). A rule applies to
every branch whose name matches its pattern, now or later, however the branch was made;
patterns are ``fnmatch`` patterns (``*``, ``?``, ``[seq]``), compared case-sensitively, as
lakeFS's are. The actions are lakeFS's two, plus deleting the branch:

* ``staging_write``: writing to the branch's staging area (uploads, deletes, links, resets);
* ``commit``: making a commit on it (commit, revert, cherry-pick, import, table commits);
* ``delete``: deleting the branch.

Merges into a matching branch stay allowed: that is how a protected branch changes.
Nothing here does I/O; the rules are read by the stores and the engine.
"""

from __future__ import annotations

import fnmatch
import hashlib
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from graveler.core.errors import (
    CommitBlockedByRule,
    InvalidArgument,
    ProtectionRuleBlocked,
    WriteBlockedByRule,
)

#: The longest pattern a rule may have.
MAX_PATTERN_LENGTH = 256


class BlockedAction(StrEnum):
    STAGING_WRITE = "staging_write"
    COMMIT = "commit"
    DELETE = "delete"


#: What a rule blocks when it does not say: lakeFS's rules block staging writes and commits.
DEFAULT_BLOCKED: frozenset[BlockedAction] = frozenset(
    {BlockedAction.STAGING_WRITE, BlockedAction.COMMIT}
)


@dataclass(frozen=True, slots=True)
class ProtectionRule:
    """Branches whose names match ``pattern`` refuse the ``blocked`` actions."""

    pattern: str
    blocked: frozenset[BlockedAction] = field(default=DEFAULT_BLOCKED)

    def matches(self, branch: str) -> bool:
        return fnmatch.fnmatchcase(branch, self.pattern)

    @property
    def actions(self) -> list[str]:
        """The blocked actions' names, sorted."""
        return sorted(a.value for a in self.blocked)


def rule(pattern: object, blocked: Iterable[object] | None = None) -> ProtectionRule:
    """A checked rule: ``pattern`` a non-empty pattern of at most 256 printable characters,
    ``blocked`` action names (None: lakeFS's default, staging writes and commits). Raises
    InvalidArgument."""
    if not isinstance(pattern, str) or not pattern:
        raise InvalidArgument("a branch protection rule needs a non-empty pattern")
    if len(pattern) > MAX_PATTERN_LENGTH or not pattern.isprintable():
        raise InvalidArgument(
            f"branch protection pattern {pattern[:60]!r} must be at most "
            f"{MAX_PATTERN_LENGTH} printable characters"
        )
    if blocked is None:
        return ProtectionRule(pattern)
    actions = frozenset(_action(a) for a in blocked)
    if not actions:
        raise InvalidArgument(f"the rule for {pattern!r} blocks nothing: name an action")
    return ProtectionRule(pattern, actions)


def _action(name: object) -> BlockedAction:
    try:
        return BlockedAction(name if isinstance(name, str) else "")
    except ValueError:
        known = ", ".join(a.value for a in BlockedAction)
        raise InvalidArgument(f"unknown blocked action {name!r:.40}: use {known}") from None


def ruleset(rules: Iterable[ProtectionRule]) -> list[ProtectionRule]:
    """``rules`` sorted by pattern; InvalidArgument when two share a pattern."""
    chosen = sorted(rules, key=lambda r: r.pattern)
    for a, b in itertools.pairwise(chosen):
        if a.pattern == b.pattern:
            raise InvalidArgument(f"two branch protection rules for pattern {a.pattern!r}")
    return chosen


def blocking(
    rules: Iterable[ProtectionRule], branch: str, action: BlockedAction
) -> ProtectionRule | None:
    """The first rule (by pattern) that matches ``branch`` and blocks ``action``."""
    for r in rules:
        if action in r.blocked and r.matches(branch):
            return r
    return None


def check(rules: Iterable[ProtectionRule], branch: str, action: BlockedAction) -> None:
    """Raise ProtectionRuleBlocked when a rule blocks ``action`` on ``branch``: for a staging
    write a WriteBlockedByRule (a WriteToProtectedBranch), for a commit a CommitBlockedByRule
    (a CommitToProtectedBranch), as the per-branch flag's refusals are."""
    found = blocking(rules, branch, action)
    if found is not None:
        kind = _REFUSALS.get(action, ProtectionRuleBlocked)
        raise kind(branch, found.pattern, action.value)


_REFUSALS: dict[BlockedAction, type[ProtectionRuleBlocked]] = {
    BlockedAction.STAGING_WRITE: WriteBlockedByRule,
    BlockedAction.COMMIT: CommitBlockedByRule,
}


def etag(rules: Sequence[ProtectionRule]) -> str:
    """A quoted tag of the rule set, equal for equal sets (HTTP's ``ETag``/``If-Match``)."""
    doc = [[r.pattern, r.actions] for r in ruleset(rules)]
    return '"' + hashlib.sha256(json.dumps(doc).encode()).hexdigest()[:32] + '"'


def encode_actions(blocked: frozenset[BlockedAction]) -> str:
    """The stored form of a rule's actions: their names, sorted, comma-separated."""
    return ",".join(sorted(a.value for a in blocked))


def decode_actions(text: str) -> frozenset[BlockedAction]:
    """The actions of :func:`encode_actions`'s text (unknown names are ignored, so a
    database written by a newer build blocks at least what this build knows)."""
    known = {a.value for a in BlockedAction}
    return frozenset(BlockedAction(n) for n in text.split(",") if n in known)
