"""Deciding, before a three-way merge, which tables the merge must treat as tables.

:func:`plan_table_merges` reads the source's changes since the merge base, finds the tables
whose metadata they touch (:func:`graveler.tables.registry.table_of`), and keeps those that
the destination changed too (a prefix-bounded diff: it costs the destination's changes under
the table, not the table). For each such table the merged contents come from its format
(:meth:`graveler.tables.port.TableFormat.merge`), which replays one side's table commits
over the other's or raises TableConflict. A strategy settles a table the way it settles a
file: only when it conflicts, and then with one side's whole table, never a mix of files:

* no strategy: the TableConflict is raised;
* ``source-wins``: the source's table, whole;
* ``dest-wins``: the destination's table, whole.

So two runs that append to one Delta table both land under any strategy.

The answer is a :class:`graveler.storage.committed.merge.PrefixOverride` for the tree merge: the
tables' prefixes, the changes to apply under them, and the objects the formats wrote for them,
which the tree merge waits for with its own files.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from graveler.core.errors import TableConflict
from graveler.core.model import Commit
from graveler.core.validate import prefix_key
from graveler.storage.committed.apply import Change
from graveler.storage.committed.merge import MergeStrategy, PrefixOverride
from graveler.tables import registry
from graveler.tables.port import TableChange, TableFormat, TableMergeContext
from graveler.views.context import RepoContext

if TYPE_CHECKING:
    from concurrent.futures import Future


def plan_table_merges(
    repo: RepoContext,
    base: Commit | None,
    source: Commit,
    dest: Commit,
    strategy: MergeStrategy,
    *,
    source_ref: str,
    dest_ref: str,
) -> PrefixOverride | None:
    """The override for tables that both sides changed, or None when there is none."""
    known = registry.formats()
    if not known:
        return None
    base_mr = base.metarange_id if base is not None else ""
    touched = _tables_touched(repo, base_mr, source.metarange_id, known)
    both = {
        root: fmt
        for root, fmt in touched.items()
        if _changed_under(repo, base_mr, dest.metarange_id, root)
    }
    if not both:
        return None
    changes: list[Change] = []
    flushing: list[Future[str]] = []
    for root, fmt in sorted(both.items()):
        ctx = TableMergeContext(
            repo,
            fmt.name,
            root,
            base.id if base else None,
            source.id,
            dest.id,
            source_ref,
            dest_ref,
        )
        changes.extend(_merged_table(ctx, fmt, strategy, source, dest))
        flushing += ctx.flushing
    prefixes = tuple(sorted(prefix_key(root) for root in both))
    ordered = tuple(sorted(changes, key=lambda c: c.key))
    return PrefixOverride(prefixes, ordered, tuple(flushing))


def _merged_table(
    ctx: TableMergeContext,
    fmt: TableFormat,
    strategy: MergeStrategy,
    source: Commit,
    dest: Commit,
) -> list[Change]:
    """The format's merge of one table; when it conflicts, the strategy's side, whole."""
    try:
        return _as_changes(ctx.root, fmt.merge(ctx))
    except TableConflict:
        if strategy is MergeStrategy.NONE:
            raise
    if strategy is MergeStrategy.DEST_WINS:
        return []
    found = ctx.repo.committed.diff(dest.metarange_id, source.metarange_id, prefix_key(ctx.root))
    return [Change(d.key, d.right) for d in found]


def _tables_touched(
    repo: RepoContext, base_mr: str, source_mr: str, known: tuple[TableFormat, ...]
) -> dict[str, TableFormat]:
    """Root -> format of every table whose metadata the source changed since the base;
    tables nested inside another table's root count as part of the outer one."""
    found: dict[str, TableFormat] = {}
    for d in repo.committed.diff(base_mr, source_mr):
        hit = registry.table_of(d.key.decode(), known)
        if hit is not None:
            found.setdefault(hit[1], hit[0])
    roots = sorted(found)
    outer = [r for r in roots if not any(r != o and r.startswith(o) for o in roots)]
    return {r: found[r] for r in outer}


def _changed_under(repo: RepoContext, base_mr: str, dest_mr: str, root: str) -> bool:
    return next(iter(repo.committed.diff(base_mr, dest_mr, prefix_key(root))), None) is not None


def _as_changes(root: str, changes: Iterable[TableChange]) -> list[Change]:
    """Tree changes for a format's answer (a path given twice: the later wins); every path
    must lie under the table's root."""
    out: dict[str, Change] = {}
    for change in changes:
        if not change.path.startswith(root):
            raise ValueError(f"table merge of {root!r} returned {change.path!r}, outside it")
        record = change.entry.to_record() if change.entry is not None else None
        out[change.path] = Change(change.path.encode(), record)
    return list(out.values())
