"""Ref expressions: ``BASE`` followed by any number of ``~N``, ``^N``, ``~`` and ``^``.

BASE is a full commit ID, a branch, a tag, or a unique commit-ID prefix (at least 4 hex
digits), tried in that order. ``~N`` follows first parents N times; ``^N`` takes the N-th
parent (``^0`` is the commit itself); a bare ``~`` or ``^`` means 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from graveler.errors import InvalidRef

_MODIFIER = re.compile(r"([~^])(\d*)")
_HEX = re.compile(r"^[0-9a-f]+$")
_BAD_BASE = re.compile(r"[\s:]")
MIN_PREFIX = 4


@dataclass(frozen=True, slots=True)
class RefExpression:
    base: str
    modifiers: tuple[tuple[str, int], ...] = ()

    @property
    def is_plain(self) -> bool:
        return not self.modifiers


def parse_ref(text: str) -> RefExpression:
    """Parse a ref expression; raises InvalidRef (also for a non-string, hashable or not)."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidRef("empty ref expression")
    return _parse(text)


@lru_cache(maxsize=4096)
def _parse(text: str) -> RefExpression:
    """The parse of a non-empty string (pure, so memoised)."""
    cut = min((i for i in (text.find("~"), text.find("^")) if i >= 0), default=len(text))
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
        digits = m.group(2)
        if len(digits) > 6:
            raise InvalidRef(f"ref expression {text!r}: number too large")
        modifiers.append((m.group(1), int(digits) if digits else 1))
        pos = m.end()
    return RefExpression(base, tuple(modifiers))


def looks_like_commit_prefix(text: str) -> bool:
    return MIN_PREFIX <= len(text) <= 64 and _HEX.match(text) is not None
