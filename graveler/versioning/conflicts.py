"""Pluggable merge conflict resolution, and lakeFS's record of the merge strategy.

A conflict resolver is a callable that gets each conflicting key of a merge (a
:class:`KeyConflict`: the path and its entry at the merge base, in the source and in the
destination, None where absent) and returns :attr:`Resolution.SOURCE` or
:attr:`Resolution.DEST` (or the strings ``"source"`` / ``"dest"``), or None to leave the key to
the merge strategy. It may raise to refuse the merge: a :class:`~graveler.core.errors.GravelerError`
propagates as it is, anything else becomes a :class:`~graveler.core.errors.MergeConflict` naming the
key. Either way nothing is merged.

    def newest_wins(c: KeyConflict) -> Resolution:
        if c.source is None or c.dest is None:
            return Resolution.DEST  # keep deletions conservative
        return Resolution.SOURCE if c.source.mtime >= c.dest.mtime else Resolution.DEST

    repo.merge("dev", "main", resolver=newest_wins)

The resolver comes on top of the strategies: keys it leaves (None) go to ``dest-wins`` /
``source-wins``, or fail the merge when there is no strategy.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, cast

from graveler.core.errors import GravelerError, InvalidArgument, MergeConflict
from graveler.storage import entry as entries
from graveler.storage.committed.merge import MergeStrategy, RecordResolver
from graveler.storage.committed.record import ValueRecord
from graveler.storage.entry import ObjectEntry

#: lakeFS's commit metadata key for the merge strategy; merge commits carry it (and imports,
#: which are source-wins merges) so tools that read it keep working.
LAKEFS_MERGE_STRATEGY_KEY = ".lakefs.merge.strategy"
_LAKEFS_NAMES = {
    MergeStrategy.NONE: "default",
    MergeStrategy.DEST_WINS: "dest-wins",
    MergeStrategy.SOURCE_WINS: "source-wins",
}


def lakefs_strategy_name(strategy: MergeStrategy) -> str:
    """The value lakeFS records under ``.lakefs.merge.strategy``."""
    return _LAKEFS_NAMES[strategy]


class Resolution(StrEnum):
    SOURCE = "source"
    DEST = "dest"


@dataclass(frozen=True, slots=True)
class KeyConflict:
    """One key changed differently on both sides of a merge."""

    path: str
    base: ObjectEntry | None
    source: ObjectEntry | None
    dest: ObjectEntry | None


ConflictResolver = Callable[[KeyConflict], "Resolution | str | None"]


def record_resolver(resolver: ConflictResolver | None) -> RecordResolver | None:
    """The committed-layer form of ``resolver`` (records in, "source" / "dest" / None out)."""
    if resolver is None:
        return None
    if not callable(resolver):
        raise InvalidArgument(f"a conflict resolver must be callable, got {resolver!r:.60}")

    def resolve(
        key: bytes, base: ValueRecord | None, src: ValueRecord | None, dst: ValueRecord | None
    ) -> str | None:
        conflict = KeyConflict(key.decode(), _entry(base), _entry(src), _entry(dst))
        try:
            choice = resolver(conflict)
        except GravelerError:
            raise
        except Exception as exc:
            raise MergeConflict(
                [key], f"the conflict resolver refused {conflict.path!r}: {exc}"
            ) from exc
        if choice is None:
            return None
        try:
            return Resolution(choice).value
        except ValueError:
            raise InvalidArgument(
                f"conflict resolver returned {choice!r} for {conflict.path!r}; "
                "return Resolution.SOURCE, Resolution.DEST or None"
            ) from None

    return resolve


def load_resolver(path: str) -> ConflictResolver:
    """The resolver a ``package.module:function`` name points at (the command line's
    ``merge --resolver``: the operator names code already installed). Raises
    InvalidArgument when the name is malformed or does not load."""
    module, _, attr = path.partition(":")
    if not module or not attr or any(p.startswith("_") or not p for p in attr.split(".")):
        raise InvalidArgument(f"resolver {path!r} must look like 'package.module:function'")
    try:
        target: Any = importlib.import_module(module)
        for name in attr.split("."):
            target = getattr(target, name)
    except (ImportError, AttributeError) as exc:
        raise InvalidArgument(f"resolver {path!r} cannot be loaded: {exc}") from None
    if not callable(target):
        raise InvalidArgument(f"resolver {path!r} is not callable")
    return cast(ConflictResolver, target)


def _entry(rec: ValueRecord | None) -> ObjectEntry | None:
    return None if rec is None else entries.decode(rec.key, rec.value)
