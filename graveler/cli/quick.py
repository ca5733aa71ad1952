"""Commands the CLI answers without loading the engine: ``repo list`` on a SQLite database.

Scripts call ``graveler`` in loops, so start-up matters: importing SQLAlchemy and rich costs
several times what Python's own start-up does. ``repo list`` needs neither: it reads one
table (:mod:`graveler.storage.refs.lite`) and prints it as JSON or as the same plain table rich
would print (:mod:`graveler.cli.plain`). Whenever that is not exactly possible (PostgreSQL, a schema
to migrate, a terminal, a table wider than the output) :func:`answer` returns None and the
full command runs.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from graveler.cli.plain import output_width, plain_stream, plain_table
from graveler.core.config import ClientSettings
from graveler.core.model import Repository
from graveler.storage.refs.sqlite_db import plain_sqlite_path

_COLUMNS = ["REPOSITORY", "DEFAULT BRANCH", "STORAGE NAMESPACE", "CREATED"]


def answer(args: Any) -> int | None:
    """Run the command if it can be answered here (exit code), else None."""
    if (args.command, getattr(args, "action", None)) != ("repo", "list"):
        return None
    path = _sqlite_file(args.home, args.database_url)
    if path is None:
        return None
    from graveler.storage.refs.lite import list_repositories

    repos = list_repositories(path)
    if repos is None:
        return None
    if args.json:
        sys.stdout.write(json.dumps([repo_doc(r) for r in repos], indent=2, ensure_ascii=False))
        sys.stdout.write("\n")
        return 0
    rows = [[r.name, r.default_branch, r.storage_namespace, _created(r)] for r in repos]
    text = plain_table(_COLUMNS, rows, output_width()) if plain_stream(sys.stdout) else None
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


def _created(r: Repository) -> str:
    return f"{r.creation_date:%Y-%m-%d %H:%M:%S}"


def _sqlite_file(home: str | None, database_url: str | None) -> str | None:
    """The SQLite file the client would open, when it is a plain ``sqlite:///`` path."""
    settings = ClientSettings(home=home, database_url=database_url).over(ClientSettings.from_env())
    url = settings.database_url
    if url is None:
        return os.path.join(os.path.abspath(settings.home or ".graveler"), "graveler.db")
    return plain_sqlite_path(url)
