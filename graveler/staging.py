"""Views that layer a branch's staging tokens over its committed tree.

Precedence: the current staging token, then sealed tokens newest first, then the commit.
A tombstone in a higher layer hides the key below it.
"""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Iterator, Sequence

from graveler.committed.apply import Change
from graveler.committed.manager import CommittedManager
from graveler.committed.record import ValueRecord
from graveler.model import Branch, StagedEntry
from graveler.refs.port import StagingStore


def new_staging_token(repo: str, branch: str) -> str:
    """A fresh, never reused staging token for ``branch`` of ``repo``."""
    return f"{repo}/{branch}/{uuid.uuid4().hex}"


def branch_tokens(branch: Branch) -> tuple[str, ...]:
    """Tokens in read precedence order."""
    return (branch.staging_token, *branch.sealed_tokens)


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
    streams = [_ranked(staging, t, rank, start, prefix) for rank, t in enumerate(tokens)]
    last: bytes | None = None
    for key, _, entry in heapq.merge(*streams):
        if key != last:
            last = key
            yield entry


def _ranked(
    staging: StagingStore, token: str, rank: int, start: bytes, prefix: bytes
) -> Iterator[tuple[bytes, int, StagedEntry]]:
    for e in staging.iter_staged(token, start=start, prefix=prefix):
        yield e.key, rank, e


def as_changes(entries: Iterator[StagedEntry]) -> Iterator[Change]:
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


def branch_records(
    staging: StagingStore,
    committed: CommittedManager,
    branch: Branch,
    metarange_id: str,
    start: bytes = b"",
    prefix: bytes = b"",
) -> Iterator[ValueRecord]:
    """Everything a reader of the branch sees, from ``start`` under ``prefix``."""
    staged = merged_staging(staging, branch_tokens(branch), start, prefix)
    return combined_records(staged, committed.iterate(metarange_id, start, prefix))
