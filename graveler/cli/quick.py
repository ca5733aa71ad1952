"""Commands the CLI answers without loading the engine: ``repo list`` on a SQLite database.

Scripts call ``graveler`` in loops, so start-up matters: importing SQLAlchemy and rich costs
several times what Python's own start-up does. ``repo list`` needs neither: it reads one
table (:mod:`graveler.refs.lite`) and prints it as JSON or as the same plain table rich would
print. Whenever that is not exactly possible (PostgreSQL, a schema to migrate, a terminal,
a table wider than the output) :func:`answer` returns None and the full command runs.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from graveler.config import ClientSettings
from graveler.model import Repository

_SQLITE = "sqlite:///"
_COLUMNS = ["REPOSITORY", "DEFAULT BRANCH", "STORAGE NAMESPACE", "CREATED"]


def answer(args: Any) -> int | None:
    """Run the command if it can be answered here (exit code), else None."""
    if (args.command, getattr(args, "action", None)) != ("repo", "list"):
        return None
    path = _sqlite_file(args.home, args.database_url)
    if path is None:
        return None
    from graveler.refs.lite import list_repositories

    repos = list_repositories(path)
    if repos is None:
        return None
    if args.json:
        sys.stdout.write(json.dumps([repo_doc(r) for r in repos], indent=2, ensure_ascii=False))
        sys.stdout.write("\n")
        return 0
    rows = [[r.name, r.default_branch, r.storage_namespace, _created(r)] for r in repos]
    text = plain_table(_COLUMNS, rows, _output_width())
    if text is None:
        return None
    sys.stdout.write(text)
    return 0


def repo_doc(r: Repository) -> dict[str, str]:
    """The JSON document of a repository (every command prints this one; it lives here, in
    the module that imports no engine, so that ``repo list`` can print it too)."""
    return {
        "name": r.name,
        "storage_namespace": r.storage_namespace,
        "default_branch": r.default_branch,
        "creation_date": r.creation_date.isoformat(timespec="microseconds"),
    }


def plain_table(columns: list[str], rows: list[list[str]], width: int | None) -> str | None:
    """The table as rich prints it without a terminal (``show_edge=False``), or None when
    it would not fit in ``width`` characters (rich would wrap it) or ``width`` is None."""
    widths = [max(len(c) for c in column) for column in zip(columns, *rows, strict=True)]
    if width is None or sum(widths) + 3 * len(widths) - 1 > width:
        return None
    if any(not c.isprintable() for row in rows for c in row):
        return None

    def line(cells: list[str], sep: str) -> str:
        return sep.join(f" {c.ljust(w)} " for c, w in zip(cells, widths, strict=True)) + "\n"

    rule = "╇".join("━" * (w + 2) for w in widths) + "\n"
    return line(columns, "┃") + rule + "".join(line(row, "│") for row in rows)


def _created(r: Repository) -> str:
    return f"{r.creation_date:%Y-%m-%d %H:%M:%S}"


def _output_width() -> int | None:
    """rich's width without a terminal (``COLUMNS``, else 80); None on a terminal."""
    if sys.stdout.isatty():
        return None
    try:
        return int(os.environ.get("COLUMNS", "80"))
    except ValueError:
        return None


def _sqlite_file(home: str | None, database_url: str | None) -> str | None:
    """The SQLite file the client would open, when it is a plain ``sqlite:///`` path."""
    settings = ClientSettings(home=home, database_url=database_url).over(ClientSettings.from_env())
    url = settings.database_url
    if url is None:
        return os.path.join(os.path.abspath(settings.home or ".graveler"), "graveler.db")
    if not url.startswith(_SQLITE) or "?" in url or len(url) == len(_SQLITE):
        return None
    return os.path.abspath(url[len(_SQLITE) :])
