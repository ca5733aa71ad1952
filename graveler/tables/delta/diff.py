"""A Delta table's difference between two commits, as table versions (issue 27, point 6).

The commit files under ``_delta_log/`` that differ name the versions: those only the right
side has (or has with other contents) are *added*, those only the left side has are
*removed*. Each is described from its actions: ``commitInfo``'s operation, time and
parameters; ``add``/``remove`` counts; rows from their stats (``numRecords``, less
deletion-vector rows; ``dataChange=false`` actions such as OPTIMIZE's move no rows). A
``remove`` without stats (delta-rs writes none) takes its rows from the ``add`` that
brought the file, found in the versions described, else in the left side's table state.
The schema change compares the top-level columns of both sides' latest metadata.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from graveler.tables.delta import paths
from graveler.tables.delta.actions import Action, DeltaCommit, stats_records
from graveler.tables.delta.paths import LogFileKind
from graveler.tables.delta.snapshot import TableState, read_snapshot, table_state
from graveler.tables.port import ColumnChange, DiffSide, TableDiff, TableDiffContext, TableVersion

FORMAT = "delta"
PARAMETER_CHARS = 200


class DiffSource:
    """One side of a diff as a :class:`graveler.tables.delta.snapshot.LogSource`."""

    def __init__(self, ctx: TableDiffContext, side: DiffSide) -> None:
        self.ctx = ctx
        self.side = side

    def read(self, path: str) -> bytes | None:
        return self.ctx.read(self.side, path)

    def list(self, prefix: str) -> Iterator[str]:
        for entry in self.ctx.list(self.side, prefix[len(self.ctx.root) :]):
            yield entry.path


def diff_table(ctx: TableDiffContext) -> TableDiff:
    """How the Delta table at ``ctx.root`` differs from ``ctx.left`` to ``ctx.right``."""
    added: dict[int, DeltaCommit] = {}
    removed: dict[int, DeltaCommit] = {}
    for path, left, right in ctx.changes():
        found = paths.classify(ctx.root, path)
        if found is None or found.kind is not LogFileKind.COMMIT or found.version is None:
            continue
        if right is not None:
            added[found.version] = _commit(ctx, DiffSide.RIGHT, found.version, path)
        if left is not None:
            removed[found.version] = _commit(ctx, DiffSide.LEFT, found.version, path)
    left_latest = _latest(removed, added)
    right_latest = _latest(added, removed)
    rows = _Rows(ctx, [*added.values(), *removed.values()], left_latest)
    return TableDiff(
        ctx.root,
        FORMAT,
        added=tuple(describe(c, rows) for _, c in sorted(added.items())),
        removed=tuple(describe(c, rows) for _, c in sorted(removed.items())),
        columns=_columns(ctx, left_latest, right_latest) if added or removed else (),
    )


def _commit(ctx: TableDiffContext, side: DiffSide, version: int, path: str) -> DeltaCommit:
    data = ctx.read(side, path)
    return DeltaCommit.parse(version, data or b"", path)


def _latest(own: Mapping[int, DeltaCommit], other: Mapping[int, DeltaCommit]) -> int | None:
    """A side's latest version: its newest differing commit, else the version before the
    other side's first one (both sides share the history below it)."""
    if own:
        return max(own)
    return min(other) - 1 if other else None


def describe(commit: DeltaCommit, rows: _Rows) -> TableVersion:
    """One commit as a table version."""
    info = commit.commit_info
    adds = list(commit.of("add"))
    removes = list(commit.of("remove"))
    stamp = info.get("inCommitTimestamp", info.get("timestamp"))
    return TableVersion(
        version=commit.version,
        operation=commit.operation or "(no commitInfo)",
        timestamp=datetime.fromtimestamp(stamp / 1000, UTC) if isinstance(stamp, int) else None,
        files_added=len(adds),
        files_removed=len(removes),
        rows_added=_sum(rows.of(a) for a in adds if a.get("dataChange", True)),
        rows_removed=_sum(rows.of(r) for r in removes if r.get("dataChange", True)),
        parameters={k: _text(v) for k, v in commit.parameters.items()},
    )


class _Rows:
    """Rows of ``add``/``remove`` actions, from their stats or from the add of the file."""

    def __init__(self, ctx: TableDiffContext, commits: Sequence[DeltaCommit], left: int | None):
        self.ctx = ctx
        self.left = left
        self.known: dict[str, int | None] = {}
        for commit in commits:
            for body in commit.of("add"):
                self.known[str(body.get("path"))] = stats_records(body)
        self.state: TableState | None = None

    def of(self, body: Action) -> int | None:
        own = stats_records(body)
        if own is not None or "add" in body:
            return own
        path = str(body.get("path"))
        if path not in self.known and self.left is not None and self.left >= 0:
            if self.state is None:
                self.state = table_state(
                    DiffSource(self.ctx, DiffSide.LEFT), self.ctx.root, self.left
                )
            found = self.state.files.get(path)
            self.known[path] = stats_records(found) if found is not None else None
        return self.known.get(path)


def _sum(values: Iterator[int | None]) -> int | None:
    total = 0
    for value in values:
        if value is None:
            return None
        total += value
    return total


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= PARAMETER_CHARS else text[: PARAMETER_CHARS - 1] + "…"


def _columns(
    ctx: TableDiffContext, left: int | None, right: int | None
) -> tuple[ColumnChange, ...]:
    before = _schema(ctx, DiffSide.LEFT, left)
    after = _schema(ctx, DiffSide.RIGHT, right)
    changes = []
    for name in [*before, *(n for n in after if n not in before)]:
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        kind = "added" if old is None else "removed" if new is None else "changed"
        changes.append(ColumnChange(name, kind, old, new))
    return tuple(changes)


def _schema(ctx: TableDiffContext, side: DiffSide, version: int | None) -> dict[str, str]:
    """Column name -> type (``long``, ``string not null``...) at ``version``."""
    if version is None or version < 0:
        return {}
    metadata = read_snapshot(DiffSource(ctx, side), ctx.root, version).metadata
    try:
        fields = json.loads(metadata.get("schemaString") or "{}").get("fields") or []
    except ValueError:
        return {}
    out = {}
    for f in fields:
        kind = f.get("type")
        text = kind if isinstance(kind, str) else json.dumps(kind, separators=(",", ":"))
        out[str(f.get("name"))] = text if f.get("nullable", True) else f"{text} not null"
    return out
