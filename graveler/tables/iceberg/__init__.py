"""Iceberg tables in graveler repositories: where they live in a ref's tree
(:mod:`.names`), the catalog's engine (:mod:`.catalog`), and the table format the merge asks
about tables changed on both sides (:data:`FORMAT`, a logical merge by Iceberg's own rules,
:mod:`.merge`) and diffs describe as snapshots (:mod:`.diff`).

:class:`GravelerCatalog` (public, :mod:`.pycatalog`) is a pyiceberg catalog over one
repository, in process, with no server: what the Dagster and Airflow integrations use. The
REST catalog that ``graveler serve`` mounts is :mod:`graveler.server.catalog`; both name
tables ``REF.NAMESPACE....TABLE`` and share the engine, so a table written through either is
the same table.

Importing this package is cheap (the merge's registry imports it on every first merge);
pyiceberg is imported when a table is actually merged (a diff reads metadata JSON only).
Without pyiceberg installed the format is not offered (ImportError), and Iceberg tables
merge as files: both sides changing one table is then a conflict on its pointer.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from graveler.tables.iceberg.names import table_root
from graveler.tables.port import TableChange, TableDiff, TableDiffContext, TableMergeContext
from graveler.views.context import RepoContext

if TYPE_CHECKING:
    from graveler.tables.iceberg.pycatalog import GravelerCatalog

__all__ = ["FORMAT", "GravelerCatalog", "IcebergFormat"]

if importlib.util.find_spec("pyiceberg") is None:  # pragma: no cover - the tables extra
    raise ImportError("pyiceberg is not installed: pip install 'graveler[tables]'")


class IcebergFormat:
    """The Iceberg table format of the merge's table layer."""

    name = "iceberg"

    def table_root(self, path: str) -> str | None:
        return table_root(path)

    def merge(self, ctx: TableMergeContext) -> list[TableChange]:
        from graveler.tables.iceberg.merge import merge_table

        return merge_table(ctx)

    def diff(self, ctx: TableDiffContext) -> TableDiff:
        """The snapshots, files, rows and columns that differ (see :mod:`.diff`)."""
        from graveler.tables.iceberg.diff import diff_table

        return diff_table(ctx)

    def missing_files(
        self, repo: RepoContext, commit_id: str, root: str
    ) -> Iterator[tuple[str, str]]:
        """For fsck: files the table's metadata references that the commit lacks."""
        from graveler.tables.iceberg.check import missing_files

        return missing_files(repo, commit_id, root)


FORMAT = IcebergFormat()


def __getattr__(name: str) -> Any:
    if name == "GravelerCatalog":  # imported on use: it pulls in pyiceberg's catalog stack
        from graveler.tables.iceberg.pycatalog import GravelerCatalog

        return GravelerCatalog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
