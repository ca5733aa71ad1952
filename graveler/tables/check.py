"""Table checks for fsck: formats that can tell which files a table needs
(``missing_files(repo, commit_id, root)``, an optional method of a
:class:`~graveler.tables.port.TableFormat`) report those a commit lacks."""

from __future__ import annotations

from collections.abc import Iterator

from graveler.tables import registry
from graveler.views.context import RepoContext
from graveler.views.reads import iter_objects


def table_problems(repo: RepoContext, commit_id: str) -> Iterator[tuple[str, str, str]]:
    """(table root, subject, detail) of every file a table of the commit references and the
    commit does not hold. Reads the whole tree once, then each table's metadata."""
    checkers = tuple(f for f in registry.formats() if hasattr(f, "missing_files"))
    if not checkers:
        return
    roots: dict[str, object] = {}
    for entry in iter_objects(repo, commit_id):
        hit = registry.table_of(entry.path, checkers)
        if hit is not None:
            roots.setdefault(hit[1], hit[0])
    for root, fmt in sorted(roots.items()):
        for subject, detail in fmt.missing_files(repo, commit_id, root):  # type: ignore[attr-defined]
            yield root, subject, detail
