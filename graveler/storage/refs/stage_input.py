"""What a ``stage`` call is given, checked and cut into chunks: shared by both SQL stores
(:mod:`graveler.storage.refs.sql_staging`, :mod:`graveler.storage.refs.sqlite_staging`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TypeGuard

from graveler.core.errors import InvalidArgument
from graveler.core.model import StagedEntry

#: Distinct keys written per upsert statement inside a ``stage`` call.
DEFAULT_CHUNK_SIZE = 5_000
#: Calls with at most this many entries (a put, a delete) take the one-statement path
#: (:mod:`graveler.storage.refs.sqlite_stage`) on SQLite.
FEW_ENTRIES = 16


def few(entries: Iterable[StagedEntry]) -> TypeGuard[Sequence[StagedEntry]]:
    """A list or tuple of one to :data:`FEW_ENTRIES` entries."""
    return isinstance(entries, list | tuple) and 0 < len(entries) <= FEW_ENTRIES


def check_chunk_size(size: int) -> int:
    if size < 1:
        raise InvalidArgument(f"chunk_size must be positive, got {size}")
    return size


def check_entry(entry: StagedEntry) -> None:
    """Refuse what the drivers would store with another type (SQLite is weakly typed)."""
    if type(entry.key) is not bytes:
        raise InvalidArgument(f"staged key must be bytes, got {type(entry.key).__name__}")
    for name in ("identity", "value"):
        field = getattr(entry, name)
        if field is not None and type(field) is not bytes:
            raise InvalidArgument(f"staged {name} must be bytes or None, got {field!r:.40}")


def chunks(entries: Iterable[StagedEntry], size: int) -> Iterator[list[StagedEntry]]:
    """``entries``, each checked, in chunks of at most ``size`` distinct keys, each sorted by
    key (a stable lock order for concurrent writers). Within a chunk the last entry for a key
    wins; later chunks overwrite earlier ones because they are executed in order."""
    pending: dict[bytes, StagedEntry] = {}
    for entry in entries:
        check_entry(entry)
        pending[entry.key] = entry
        if len(pending) >= size:
            yield [pending[key] for key in sorted(pending)]
            pending = {}
    if pending:
        yield [pending[key] for key in sorted(pending)]
