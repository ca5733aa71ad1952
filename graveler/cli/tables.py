"""``graveler diff`` for tables: a table whose metadata differs (a Delta Lake table, an
Iceberg table) shows as its versions (Delta commits, Iceberg snapshots), files, rows and
columns (graveler.tables.diff) instead of its metadata and data files; ``--files`` shows the
files."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graveler.repository import Repository
from graveler.tables import registry
from graveler.tables.diff import TablesFound, table_diffs
from graveler.tables.port import TableDiff, TableFormat, TableVersion
from graveler.views.diff import Difference


def tables_in(
    repo: Repository, left: str, right: str, changes: Sequence[Difference]
) -> list[TableDiff]:
    """The diffs of the tables whose metadata is among ``changes`` (committed, left to
    right)."""
    known = registry.formats()
    roots: dict[str, TableFormat] = {}
    for d in changes:
        hit = registry.table_of(d.path, known) if known else None
        if hit is not None:
            roots.setdefault(hit[1], hit[0])
    if not roots:
        return []
    lc, rc = repo.resolve(left).commit.id, repo.resolve(right).commit.id
    outer = {r: f for r, f in roots.items() if not any(r != o and r.startswith(o) for o in roots)}
    return table_diffs(repo, lc, rc, TablesFound(outer, complete=True))


def table_doc(t: TableDiff) -> dict[str, Any]:
    return {
        "type": "table",
        "path": t.root,
        "format": t.format,
        "added": [version_doc(v) for v in t.added],
        "removed": [version_doc(v) for v in t.removed],
        "columns": [
            {"column": c.column, "change": c.change, "before": c.before, "after": c.after}
            for c in t.columns
        ],
        "files_added": t.total("files_added"),
        "files_removed": t.total("files_removed"),
        "rows_added": t.total("rows_added"),
        "rows_removed": t.total("rows_removed"),
    }


def version_doc(v: TableVersion) -> dict[str, Any]:
    return {
        "version": v.version,
        "operation": v.operation,
        "timestamp": v.timestamp.isoformat() if v.timestamp else None,
        "files_added": v.files_added,
        "files_removed": v.files_removed,
        "rows_added": v.rows_added,
        "rows_removed": v.rows_removed,
        "parameters": dict(v.parameters),
    }


def table_lines(t: TableDiff) -> list[tuple[str, str]]:
    """A table's diff as lines: (rich markup, the plain text it prints)."""
    counts = _counts(t.total("files_added"), t.total("files_removed"), "file")
    rows = _counts(t.total("rows_added"), t.total("rows_removed"), "row")
    head = f"{t.root or '/'} ({t.format}): {len(t.added)} version(s) added"
    if t.removed:
        head += f", {len(t.removed)} only on the left"
    head += f"; {counts}; {rows}"
    lines = [(f"[yellow]~ table  [/yellow] {head}", f"~ table   {head}")]
    body = [f"    + v{v.version} {v.operation} {_version_counts(v)}" for v in t.added]
    body += [f"    - v{v.version} {v.operation} {_version_counts(v)}" for v in t.removed]
    body += [
        f"    column {c.column} {c.change}: {c.before or '-'} -> {c.after or '-'}"
        for c in t.columns
    ]
    return lines + [(line, line) for line in body]


def _version_counts(v: TableVersion) -> str:
    files = _counts(v.files_added, v.files_removed, "file")
    return f"{files}; {_counts(v.rows_added, v.rows_removed, 'row')}"


def _counts(added: int | None, removed: int | None, what: str) -> str:
    def one(n: int | None, sign: str) -> str:
        return f"{sign}? {what}s" if n is None else f"{sign}{n} {what}{'' if n == 1 else 's'}"

    return f"{one(added, '+')} {one(removed, '-')}"
