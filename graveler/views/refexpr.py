"""Ref expressions: ``BASE`` followed by modifiers, parsed as lakeFS parses them.

BASE is a full commit ID, a branch, a tag, or a unique commit-ID prefix (at least 4 hex
digits), tried in that order. Modifiers:

* ``~N`` follows first parents N times; ``^N`` takes the N-th parent (``^0`` is the commit
  itself); a bare ``~`` or ``^`` means 1;
* ``@`` (a branch's committed state, staging excluded) and ``$`` (a branch with its staged
  changes, what a plain branch name already means) take no number and are only valid as the
  one modifier of a branch: ``main@1``, ``main@^`` and ``main^@`` are invalid refs.

The base ends at the first ``~``, ``^``, ``@`` or ``$``, so those characters cannot occur in
branch or tag names (:mod:`graveler.core.validate` refuses them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from graveler.core.errors import InvalidRef

_MODIFIER = re.compile(r"([~^@$])(\d*)")
_HEX = re.compile(r"^[0-9a-f]+$")
_BAD_BASE = re.compile(r"[\s:]")
_SEPARATORS = "~^@$"
MIN_PREFIX = 4
#: Modifiers that select a view of a branch rather than walk history.
BRANCH_VIEWS = frozenset("@$")


@dataclass(frozen=True, slots=True)
class RefExpression:
    """A parsed ref: its base and its modifiers, each ``(kind, number)``; ``@`` and ``$``
    carry number 1 (as lakeFS records them)."""

    base: str
    modifiers: tuple[tuple[str, int], ...] = ()

    @property
    def is_plain(self) -> bool:
        return not self.modifiers

    @property
    def branch_view(self) -> str | None:
        """``"@"`` or ``"$"`` when that is the expression's one modifier, else None."""
        if len(self.modifiers) == 1 and self.modifiers[0][0] in BRANCH_VIEWS:
            return self.modifiers[0][0]
        return None


def parse_ref(text: str) -> RefExpression:
    """Parse a ref expression; raises InvalidRef (also for a non-string, hashable or not)."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidRef("empty ref expression")
    return _parse(text)


@lru_cache(maxsize=4096)
def _parse(text: str) -> RefExpression:
    """The parse of a non-empty string (pure, so memoised)."""
    cut = min((i for i in map(text.find, _SEPARATORS) if i >= 0), default=len(text))
    base, rest = text[:cut], text[cut:]
    if not base:
        raise InvalidRef(f"ref expression {text!r} has no base (branch, tag or commit)")
    if _BAD_BASE.search(base):
        raise InvalidRef(f"ref expression {text!r}: the base contains whitespace or ':'")
    modifiers: list[tuple[str, int]] = []
    pos = 0
    while pos < len(rest):
        m = _MODIFIER.match(rest, pos)
        if m is None or m.end() == pos:
            raise InvalidRef(f"ref expression {text!r}: cannot parse {rest[pos:]!r}")
        kind, digits = m.group(1), m.group(2)
        if kind in BRANCH_VIEWS and digits:
            raise InvalidRef(f"ref expression {text!r}: '{kind}' takes no number")
        if len(digits) > 6:
            raise InvalidRef(f"ref expression {text!r}: number too large")
        modifiers.append((kind, int(digits) if digits else 1))
        pos = m.end()
    expr = RefExpression(base, tuple(modifiers))
    if any(k in BRANCH_VIEWS for k, _ in modifiers) and expr.branch_view is None:
        raise InvalidRef(
            f"ref expression {text!r}: '@' and '$' must be the only modifier (of a branch)"
        )
    return expr


def looks_like_commit_prefix(text: str) -> bool:
    return MIN_PREFIX <= len(text) <= 64 and _HEX.match(text) is not None
