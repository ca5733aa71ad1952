"""Views that layer a branch's staging tokens over its committed tree.

Precedence: the current staging token, then sealed tokens newest first, then the commit.
A tombstone in a higher layer hides the key below it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from graveler.core.model import StagedEntry
from graveler.storage.committed.record import ValueRecord
from graveler.storage.refs.port import StagingStore, merge_tokens

if TYPE_CHECKING:
    from graveler.storage.committed.apply import Change

#: Hex digits of the issue time (milliseconds since the epoch) that open a token's last part.
_TIME_DIGITS = 12


def new_staging_token(repo: str, branch: str) -> str:
    """A fresh, never reused staging token for ``branch`` of ``repo``. Its last part is the
    time it was issued (milliseconds since the epoch, 12 hex digits), a dash and 76 random
    bits, as long as the UUID it replaces; :func:`token_issued_at` reads the time back."""
    millis = time.time_ns() // 1_000_000
    return f"{repo}/{branch}/{millis:0{_TIME_DIGITS}x}-{uuid.uuid4().hex[:19]}"


def token_issued_at(token: str) -> datetime | None:
    """When :func:`new_staging_token` issued ``token`` (a branch gets a fresh token when it is
    created, committed or reset); None for a token without a time (older format)."""
    last = token.rsplit("/", 1)[-1]
    stamp = last[:_TIME_DIGITS]
    if last[_TIME_DIGITS : _TIME_DIGITS + 1] != "-" or not all(
        c in "0123456789abcdef" for c in stamp
    ):
        return None
    return datetime.fromtimestamp(int(stamp, 16) / 1000, UTC)


def staged_lookup(staging: StagingStore, tokens: Sequence[str], key: bytes) -> StagedEntry | None:
    """The highest-precedence staged entry for ``key`` (possibly a tombstone), or None."""
    for token in tokens:
        entry = staging.get_staged(token, key)
        if entry is not None:
            return entry
    return None


def merged_staging(
    staging: StagingStore, tokens: Sequence[str], start: bytes = b"", prefix: bytes = b""
) -> Iterator[StagedEntry]:
    """Staged entries of several tokens, one per key, highest precedence wins, key order."""

    def one(token: str, start: bytes, prefix: bytes) -> Iterator[StagedEntry]:
        return staging.iter_staged(token, start=start, prefix=prefix)

    return merge_tokens(one, tokens, start, prefix)


def as_changes(entries: Iterator[StagedEntry]) -> Iterator[Change]:
    from graveler.storage.committed.apply import Change  # what commits need, not reads

    for e in entries:
        if e.identity is None or e.value is None:
            yield Change(e.key, None)
        else:
            yield Change(e.key, ValueRecord(e.key, e.identity, e.value))


def combined_records(
    staged: Iterator[StagedEntry], committed: Iterator[ValueRecord]
) -> Iterator[ValueRecord]:
    """Committed records overlaid with staged entries (tombstones remove), key order."""
    s = next(staged, None)
    c = next(committed, None)
    while s is not None or c is not None:
        if c is None or (s is not None and s.key <= c.key):
            assert s is not None
            if s.identity is not None and s.value is not None:
                yield ValueRecord(s.key, s.identity, s.value)
            if c is not None and c.key == s.key:
                c = next(committed, None)
            s = next(staged, None)
        else:
            yield c
            c = next(committed, None)
