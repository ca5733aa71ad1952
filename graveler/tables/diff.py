"""Table-level diffs: which tables differ between two commits, and how (issue 27, point 6).

:func:`diff_tables` walks the committed diff once, finds the tables whose metadata differs
(as the merge does, :func:`graveler.tables.registry.table_of`) and asks each one's format
for a :class:`graveler.tables.port.TableDiff`. A format without a ``diff`` method
(:class:`graveler.tables.port.TableDiffer`) is left out: its tables show as files. The walk
costs the number of changed paths; ``limit`` bounds it for callers that page (the web UI),
which then see the tables among the first ``limit`` changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from graveler.core.validate import prefix_key
from graveler.tables import registry
from graveler.tables.port import TableDiff, TableDiffContext, TableDiffer, TableFormat
from graveler.views.context import RepoContext


@dataclass(frozen=True)
class TablesFound:
    """The tables found among the changes, and whether the walk saw them all."""

    roots: dict[str, TableFormat]
    complete: bool

    def covers(self, path: str) -> bool:
        """Whether ``path`` lies in one of the tables (shown as a table, not as a file)."""
        return any(path.startswith(root) for root in self.roots)


def tables_changed(
    repo: RepoContext, left: str, right: str, *, prefix: str = "", limit: int | None = None
) -> TablesFound:
    """The tables whose metadata differs between the commits ``left`` and ``right`` (IDs),
    under ``prefix``, looking at no more than ``limit`` changes."""
    known = registry.formats()
    found: dict[str, TableFormat] = {}
    lm = repo.get_commit(left).metarange_id
    rm = repo.get_commit(right).metarange_id
    for seen, d in enumerate(repo.committed.diff(lm, rm, prefix_key(prefix))):
        if limit is not None and seen >= limit:
            return TablesFound(_outermost(found), complete=False)
        hit = registry.table_of(d.key.decode(), known) if known else None
        if hit is not None:
            found.setdefault(hit[1], hit[0])
    return TablesFound(_outermost(found), complete=True)


def diff_tables(
    repo: RepoContext, left: str, right: str, *, prefix: str = "", limit: int | None = None
) -> list[TableDiff]:
    """How each table differs from the ref ``left`` to the ref ``right`` (their commits),
    in root order."""
    lc, rc = repo.resolve(left).commit, repo.resolve(right).commit
    found = tables_changed(repo, lc.id, rc.id, prefix=prefix, limit=limit)
    return table_diffs(repo, lc.id, rc.id, found)


def table_diffs(repo: RepoContext, left: str, right: str, found: TablesFound) -> list[TableDiff]:
    """The diffs of the tables ``found`` between the commits ``left`` and ``right``."""
    out = []
    for root, fmt in sorted(found.roots.items()):
        if isinstance(fmt, TableDiffer):
            out.append(fmt.diff(TableDiffContext(repo, fmt.name, root, left, right)))
    return out


def _outermost(found: dict[str, TableFormat]) -> dict[str, TableFormat]:
    roots = sorted(found)
    return {r: found[r] for r in roots if not any(r != o and r.startswith(o) for o in roots)}
