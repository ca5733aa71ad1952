"""Delta Lake tables: recognised by their ``_delta_log/``, merged as tables.

When both sides of a merge changed one Delta table, :mod:`graveler.tables.delta.merge`
replays the source's commits after the destination's, deciding conflicts by Delta's own
rules (:mod:`graveler.tables.delta.conflicts`); ``FORMAT`` is what
:mod:`graveler.tables.registry` loads. See docs/delta.md.
"""

from __future__ import annotations

from graveler.tables.delta import paths
from graveler.tables.delta.diff import diff_table
from graveler.tables.delta.merge import merge_table
from graveler.tables.port import TableChange, TableDiff, TableDiffContext, TableMergeContext


class DeltaFormat:
    """The Delta Lake table format (:class:`graveler.tables.port.TableFormat`)."""

    name = "delta"

    def table_root(self, path: str) -> str | None:
        """The prefix holding the ``_delta_log/`` that ``path`` lies in."""
        return paths.table_root(path)

    def merge(self, ctx: TableMergeContext) -> list[TableChange]:
        """Replay the source's commits after the destination's (TableConflict when Delta's
        rules refuse them)."""
        return merge_table(ctx)

    def diff(self, ctx: TableDiffContext) -> TableDiff:
        """The versions, files, rows and columns that differ (see :mod:`.diff`)."""
        return diff_table(ctx)


FORMAT = DeltaFormat()
