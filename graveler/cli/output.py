"""Rendering for the CLI: JSON documents for scripts, rich tables for people."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from graveler.entry import ObjectEntry
from graveler.model import Branch, Commit, Tag
from graveler.operations import Difference


def commit_doc(c: Commit) -> dict[str, Any]:
    return {
        "id": c.id,
        "parents": list(c.parents),
        "message": c.message,
        "committer": c.committer,
        "creation_date": _iso(c.creation_date),
        "metadata": dict(c.metadata),
        "metarange_id": c.metarange_id,
    }


def entry_doc(e: ObjectEntry, physical_uri: str) -> dict[str, Any]:
    return {
        "path": e.path,
        "physical_address": physical_uri,
        "size": e.size,
        "checksum": e.checksum,
        "mtime": _iso(e.mtime),
        "content_type": e.content_type,
        "metadata": dict(e.metadata),
    }


def diff_doc(d: Difference) -> dict[str, Any]:
    return {"type": d.type.value, "path": d.path}


def branch_doc(b: Branch) -> dict[str, Any]:
    return {"name": b.name, "commit_id": b.commit_id, "protected": b.protected}


def tag_doc(t: Tag) -> dict[str, Any]:
    return {"name": t.name, "commit_id": t.commit_id}


def _iso(d: datetime) -> str:
    return d.isoformat(timespec="microseconds")


class Output:
    """Prints either one JSON document per command or human-friendly text."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.console = Console(highlight=False, soft_wrap=True)
        self.err = Console(stderr=True, highlight=False)

    def json(self, doc: Any) -> None:
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")

    def table(
        self, title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]
    ) -> None:
        table = Table(title=title, show_edge=False, header_style="bold")
        for col in columns:
            table.add_column(col)
        for row in rows:
            table.add_row(*(str(v) for v in row))
        self.console.print(table)

    def message(self, text: str) -> None:
        self.console.print(text)

    def commit(self, c: Commit, heading: str | None = None) -> None:
        if self.as_json:
            self.json(commit_doc(c))
            return
        if heading:
            self.console.print(heading)
        self.console.print(f"[yellow]commit {c.id}[/yellow]")
        if len(c.parents) > 1:
            self.console.print("Merge:  " + " ".join(p[:12] for p in c.parents))
        self.console.print(f"Author: {c.committer}")
        self.console.print(f"Date:   {c.creation_date:%Y-%m-%d %H:%M:%S %Z}")
        for k, v in sorted(c.metadata.items()):
            self.console.print(f"Meta:   {k} = {v}")
        self.console.print(f"\n    {c.message}\n")

    def mapping(self, doc: Mapping[str, Any]) -> None:
        width = max(len(k) for k in doc)
        for k, v in doc.items():
            shown = json.dumps(v) if isinstance(v, dict | list) else v
            self.console.print(f"{k + ':':{width + 2}}{shown}")
