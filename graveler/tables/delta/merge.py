"""The logical three-way merge of one Delta table that both sides of a merge changed.

The destination's log stays as it is. The source's commits since the merge base are
checked against the destination's, each with Delta's own conflict rules
(:mod:`.conflicts`), and then written as new versions after the destination's latest
(:mod:`.replay`), with the data files they refer to. What is not replayed:

* the source's checkpoints, ``_last_checkpoint`` and ``.crc`` files: they describe states
  in the source's numbering. The destination's stay valid (its versions keep their
  numbers), so no reader sees a wrong one; the merged table's next checkpoint is written by
  the next writer that commits on it;
* the source's deletions inside ``_delta_log/`` (log clean-up of old versions).

The cost follows the commits replayed and the destination's commits since the base, not
the table's size: the log is read by version number, never listed (except to find a
checkpoint when ``_last_checkpoint`` is missing).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from graveler.core.errors import TableConflict
from graveler.tables.delta import paths
from graveler.tables.delta.actions import Action, DeltaCommit
from graveler.tables.delta.conflicts import DeltaConflict, ReadSnapshot, check
from graveler.tables.delta.paths import LogFileKind
from graveler.tables.delta.predicates import read_set
from graveler.tables.delta.replay import replay
from graveler.tables.delta.snapshot import read_commit, read_snapshot
from graveler.tables.port import Side, TableChange, TableMergeContext
from graveler.views.reads import read_entry

FORMAT = "delta"
#: Writer features whose tables this merge replays faithfully. Others (row tracking, whose
#: row IDs a replay would have to reassign; catalog-managed commits, kept outside the
#: log's JSON files; type widening and Iceberg compatibility, which record versions
#: elsewhere) make the merge refuse the table rather than write a log Delta would reject.
SUPPORTED_FEATURES = frozenset(
    {
        "appendOnly",
        "invariants",
        "checkConstraints",
        "changeDataFeed",
        "generatedColumns",
        "columnMapping",
        "identityColumns",
        "deletionVectors",
        "timestampNtz",
        "domainMetadata",
        "v2Checkpoint",
        "inCommitTimestamp",
        "vacuumProtocolCheck",
        "checkpointProtection",
        "clustering",
        "allowColumnDefaults",
        "variantType",
        "variantType-preview",
        "variantShredding-preview",
    }
)


class SideSource:
    """One side of the merge as a :class:`graveler.tables.delta.snapshot.LogSource`."""

    def __init__(self, ctx: TableMergeContext, side: Side) -> None:
        self.ctx = ctx
        self.side = side

    def read(self, path: str) -> bytes | None:
        entry = self.ctx.stat(self.side, path)
        return None if entry is None else read_entry(self.ctx.repo, entry)

    def list(self, prefix: str) -> Iterator[str]:
        for entry in self.ctx.list(self.side, prefix[len(self.ctx.root) :]):
            yield entry.path


def merge_table(ctx: TableMergeContext) -> list[TableChange]:
    """The changes that turn the destination's table into the merged one; TableConflict
    when Delta's rules refuse the source's commits after the destination's."""
    root = ctx.root
    source = list(ctx.changes(Side.SOURCE))
    dest = {c.path: c for c in ctx.changes(Side.DEST)}
    source_versions = _new_versions(ctx, source, Side.SOURCE)
    dest_versions = _new_versions(ctx, list(dest.values()), Side.DEST)
    data = [c for c in source if paths.classify(root, c.path) is None]
    if not source_versions:
        return data  # the source wrote no commit: only its data files (e.g. VACUUM)
    if not dest_versions:
        return [c for c in source if _kept_when_dest_idle(root, c)]
    base = source_versions[0] - 1
    _check_same_base(ctx, base, dest_versions, source_versions)
    _check_data_files(ctx, data, dest)
    winners = [_commit(ctx, Side.DEST, v) for v in dest_versions]
    currents = [_commit(ctx, Side.SOURCE, v) for v in source_versions]
    snapshot = read_snapshot(SideSource(ctx, Side.BASE), root, base)
    _check_features(ctx, snapshot, [*winners, *currents])
    _check_all(ctx, snapshot, winners, currents)
    return [*data, *_replayed(ctx, snapshot, base, winners, currents)]


def _replayed(
    ctx: TableMergeContext,
    snapshot: ReadSnapshot,
    base: int,
    winners: Sequence[DeltaCommit],
    currents: Sequence[DeltaCommit],
) -> list[TableChange]:
    """The source's commits written as the versions after the destination's latest."""
    latest = winners[-1]
    dest_metadata = next(
        (m for w in reversed(winners) for m in w.of("metaData")), snapshot.metadata
    )
    replayed = replay(
        currents,
        base,
        latest.version,
        previous_ict=_ict(latest),
        ict_enabled=_ict_on(dest_metadata),
    )
    return [
        ctx.write(
            paths.log_path(ctx.root, paths.commit_name(c.version)),
            c.encode(),
            content_type="application/json",
        )
        for c in replayed
    ]


def _new_versions(ctx: TableMergeContext, changes: Sequence[TableChange], side: Side) -> list[int]:
    """The commit versions ``side`` added since the base, checked to run on without gaps;
    a commit file it rewrote or removed is refused (Delta never changes a commit)."""
    versions = []
    for change in changes:
        found = paths.classify(ctx.root, change.path)
        if found is None or found.kind is not LogFileKind.COMMIT or found.version is None:
            continue
        if change.entry is None or ctx.stat(Side.BASE, change.path) is not None:
            if change.entry is None and _cleaned_up(ctx, side, found.version):
                continue
            raise _conflict(ctx, "LogRewritten", f"the {side.value} rewrote {change.path!r}")
        versions.append(found.version)
    versions.sort()
    if versions and versions != list(range(versions[0], versions[-1] + 1)):
        raise _conflict(ctx, "LogRewritten", f"the {side.value}'s new commits have gaps")
    return versions


def _cleaned_up(ctx: TableMergeContext, side: Side, version: int) -> bool:
    """A removed commit file is log clean-up when a checkpoint at or above it remains."""
    hint = ctx.stat(side, paths.log_path(ctx.root, paths.LAST_CHECKPOINT))
    return hint is not None and version < _hint_version(read_entry(ctx.repo, hint))


def _hint_version(data: bytes) -> int:
    import json

    try:
        return int(json.loads(data)["version"])
    except (ValueError, KeyError, TypeError):
        return -1


def _kept_when_dest_idle(root: str, change: TableChange) -> bool:
    """The destination committed nothing to the table: the source's versions keep their
    numbers, so its log files (checkpoints too) are valid as they are; its removals of
    log files are left out."""
    return change.entry is not None or paths.classify(root, change.path) is None


def _check_same_base(
    ctx: TableMergeContext, base: int, dest: Sequence[int], source: Sequence[int]
) -> None:
    if dest[0] - 1 != base:
        raise _conflict(
            ctx,
            "LogRewritten",
            f"the two sides' new commits start at different versions ({source[0]}, {dest[0]})",
        )
    if base >= 0 and read_commit(SideSource(ctx, Side.BASE), ctx.root, base) is None:
        raise _conflict(ctx, "LogRewritten", f"the merge base has no commit {base}")


def _check_data_files(
    ctx: TableMergeContext, data: Sequence[TableChange], dest: dict[str, TableChange]
) -> None:
    """A data path both sides changed differently cannot be one file of the merged table."""
    for change in data:
        other = dest.get(change.path)
        if other is None:
            continue
        same = (
            other.entry is not None
            and change.entry is not None
            and other.entry.identity() == change.entry.identity()
        )
        if not same and not (other.entry is None and change.entry is None):
            raise _conflict(ctx, "ConcurrentWrite", f"both sides wrote {change.path!r}")


def _commit(ctx: TableMergeContext, side: Side, version: int) -> DeltaCommit:
    found = read_commit(SideSource(ctx, side), ctx.root, version)
    if found is None:
        raise _conflict(ctx, "LogRewritten", f"commit {version} is missing at the {side.value}")
    return found


def _check_features(
    ctx: TableMergeContext, snapshot: ReadSnapshot, commits: Sequence[DeltaCommit]
) -> None:
    protocols = [snapshot.protocol, *(p for c in commits for p in c.of("protocol"))]
    for protocol in protocols:
        unknown = set(protocol.get("writerFeatures") or ()) - SUPPORTED_FEATURES
        if unknown:
            raise _conflict(
                ctx,
                "UnsupportedTableFeature",
                f"graveler cannot replay commits of tables with {', '.join(sorted(unknown))}",
            )


def _check_all(
    ctx: TableMergeContext,
    snapshot: ReadSnapshot,
    winners: Sequence[DeltaCommit],
    currents: Sequence[DeltaCommit],
) -> None:
    """Check every source commit against every destination commit."""
    own = {p for w in winners for p in w.paths("add")}
    read_at = snapshot
    for current in currents:
        read = read_set(current, read_at.partition_columns)
        for winner in winners:
            try:
                check(current, read, winner, read_at, own)
            except DeltaConflict as e:
                raise TableConflict(
                    ctx.root,
                    FORMAT,
                    e.kind,
                    f"{ctx.source_ref!r} version {current.version} "
                    f"({current.operation or 'commit'}) conflicts with {ctx.dest_ref!r} "
                    f"version {winner.version} ({winner.operation or 'commit'}): {e.reason}",
                    source_version=current.version,
                    dest_version=winners[-1].version,
                ) from None
        read_at = ReadSnapshot(
            current.first("metaData") or read_at.metadata,
            current.first("protocol") or read_at.protocol,
        )


def _ict(commit: DeltaCommit) -> int | None:
    found = commit.commit_info.get("inCommitTimestamp")
    return found if isinstance(found, int) else None


def _ict_on(metadata: Action) -> bool:
    """Whether the metadata enables in-commit timestamps."""
    conf = metadata.get("configuration") or {}
    return str(conf.get("delta.enableInCommitTimestamps", "")).lower() == "true"


def _conflict(ctx: TableMergeContext, kind: str, reason: str) -> TableConflict:
    return TableConflict(ctx.root, FORMAT, kind, reason)
