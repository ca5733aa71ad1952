"""Iceberg's conflict validations, as the merge applies them to one replayed snapshot.

Iceberg retries a commit that lost a race by applying it again on the new table state, after
validating it against what the concurrent commits changed. The merge does the same with a
source snapshot and everything the destination changed since the merge base
(:class:`~graveler.tables.iceberg.manifests.Changes`, files added and removed):

==============================  ==================================================================
source snapshot                 conflicts when the destination, since the base...
==============================  ==================================================================
append (data files only)        never (Iceberg's appends do not validate)
replace (rewrite, compaction)   removed a file it rewrites, or added delete files in its partitions
overwrite with                  removed a file it removes; nothing else (the partitions are
``replace-partitions``          replaced again, as Iceberg's dynamic overwrite does on retry)
other overwrite / delete        removed a file it removes, or added data files, added delete
(copy-on-write and              files or removed data files in a partition it reads or writes
merge-on-read DML)              (Iceberg's serializable isolation, Spark's default for DML)
==============================  ==================================================================

Partitions are the granularity: Iceberg evaluates the operation's own filter against file
statistics, which a merge cannot see (a snapshot does not record its filter). Where the
filter would have excluded the destination's files, the merge is therefore stricter: it
conflicts where Iceberg might have let the commit through, never the other way around.
Files of different partition specs are taken to overlap.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graveler.core.errors import TableConflict
from graveler.tables.iceberg.manifests import Changes, FileRef, Partition

FORMAT = "iceberg"


def conflict(root: str, kind: str, reason: str, source: object, dest: object) -> TableConflict:
    return TableConflict(root, FORMAT, kind, reason, source_version=source, dest_version=dest)


def overlaps(a: Partition, b: Partition) -> bool:
    return a == b or a[0] != b[0]


def _in(files: Iterable[FileRef], scope: set[Partition]) -> list[FileRef]:
    return [f for f in files if any(overlaps(f.partition, p) for p in scope)]


def _shown(files: list[FileRef]) -> str:
    names = ", ".join(f.path.rsplit("/", 1)[-1] for f in files[:3])
    return names + (f" and {len(files) - 3} more" if len(files) > 3 else "")


def operation(snapshot: dict[str, Any]) -> str:
    return str((snapshot.get("summary") or {}).get("operation", ""))


def is_append(changes: Changes) -> bool:
    return not changes.removed and all(f.is_data for f in changes.added)


def check(
    root: str,
    snapshot: dict[str, Any],
    mine: Changes,
    theirs: Changes,
    dest_version: object,
) -> None:
    """Raise TableConflict when ``snapshot`` (whose changes are ``mine``) cannot be applied
    after the destination's changes ``theirs`` (see the module docstring)."""
    sid, op = snapshot["snapshot-id"], operation(snapshot)

    def fail(kind: str, reason: str) -> TableConflict:
        return conflict(root, kind, f"source snapshot {sid} ({op}): {reason}", sid, dest_version)

    if is_append(mine):
        return
    gone = mine.paths("removed") & theirs.paths("removed")
    if gone and mine.added:
        files = [f for f in mine.removed if f.path in gone]
        raise fail("MissingRequiredFiles", f"the destination already removed {_shown(files)}")
    rewritten = [f for f in mine.removed if f.is_data]
    if op == "replace":
        _check_rewrite(rewritten, theirs, fail)
        return
    if (snapshot.get("summary") or {}).get("replace-partitions") == "true":
        return
    scope = {f.partition for f in (*mine.added, *mine.removed)}
    mine_gone = mine.paths("removed")
    their_removed = (f for f in theirs.removed if f.is_data and f.path not in mine_gone)
    for kind, found in (
        ("ConflictingDataFiles", _in((f for f in theirs.added if f.is_data), scope)),
        ("ConflictingDeleteFiles", _in((f for f in theirs.added if not f.is_data), scope)),
        ("ConflictingDeletedDataFiles", _in(their_removed, scope)),
    ):
        if found:
            what = {
                "ConflictingDataFiles": "added data",
                "ConflictingDeleteFiles": "added deletes",
                "ConflictingDeletedDataFiles": "removed data",
            }[kind]
            raise fail(kind, f"the destination {what} in the same partitions: {_shown(found)}")


def _check_rewrite(rewritten: list[FileRef], theirs: Changes, fail: Any) -> None:
    """A rewrite conflicts with new deletes that may apply to the files it rewrites."""
    paths = {f.path for f in rewritten}
    scope = {f.partition for f in rewritten}
    deletes = [
        f
        for f in theirs.added
        if not f.is_data
        and (
            f.referenced in paths if f.referenced else any(overlaps(f.partition, p) for p in scope)
        )
    ]
    if deletes:
        raise fail("NewDeletesForRewrittenFiles", f"the destination added {_shown(deletes)}")
