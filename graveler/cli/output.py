"""Rendering for the CLI: JSON documents for scripts, tables and text for people.

Text and tables go through rich (colour, markup, wrapping) only where printing them plainly
would differ from what rich prints (:mod:`graveler.cli.plain`); rich is imported on first
use, so a command printing into a pipe does not pay for it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from graveler.cli.plain import output_width, plain_stream, plain_table, plain_text, write

if TYPE_CHECKING:
    from rich.console import Console

    from graveler.core.model import Branch, Commit, Tag
    from graveler.storage.entry import ObjectEntry
    from graveler.views.diff import Difference


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
    return {"name": b.name, "commit_id": b.commit_id, "protected": b.protected, "hidden": b.hidden}


def tag_doc(t: Tag) -> dict[str, Any]:
    return {"name": t.name, "commit_id": t.commit_id}


def _iso(d: datetime) -> str:
    return d.isoformat(timespec="microseconds")


class Output:
    """Prints either one JSON document per command or human-friendly text."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self._plain = plain_stream(sys.stdout)
        self._console: Console | None = None
        self._err: Console | None = None

    @property
    def console(self) -> Console:
        """rich's console on stdout (imported and made on first use)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(highlight=False, soft_wrap=True)
        return self._console

    @property
    def err(self) -> Console:
        """rich's console on stderr, for spinners and progress bars."""
        if self._err is None:
            from rich.console import Console

            self._err = Console(stderr=True, highlight=False)
        return self._err

    def json(self, doc: Any) -> None:
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")

    def table(
        self,
        title: str | None,
        columns: Sequence[str],
        rows: Iterable[Sequence[Any]],
        *,
        whole: Sequence[str] = (),
    ) -> None:
        """A table; the columns named in ``whole`` are never cut or wrapped to fit the
        width (IDs to copy), the others give way."""
        cells = [[str(v) for v in row] for row in rows]
        if title is None and self._plain:
            text = plain_table(columns, cells, output_width())
            if text is not None:
                sys.stdout.write(text)
                return
        from rich.table import Table

        table = Table(title=title, show_edge=False, header_style="bold")
        for i, col in enumerate(columns):
            if col in whole:
                width = max([len(col), *(len(row[i]) for row in cells)])
                table.add_column(col, no_wrap=True, min_width=width)
            else:
                table.add_column(col)
        for row in cells:
            table.add_row(*row)
        self.console.print(table)

    def message(self, text: str) -> None:
        """``text`` (rich markup) on its own line."""
        self.styled(text, text)

    def styled(self, markup: str, text: str) -> None:
        """``text`` plainly when rich would print it as it is, else ``markup`` (``text``
        with rich styles) through rich."""
        if self._plain and plain_text(text):
            write(text)
        else:
            self.console.print(markup)

    def commit(self, c: Commit, heading: str | None = None) -> None:
        if self.as_json:
            self.json(commit_doc(c))
            return
        if heading:
            self.message(heading)
        self.styled(f"[yellow]commit {c.id}[/yellow]", f"commit {c.id}")
        if len(c.parents) > 1:
            self.message("Merge:  " + " ".join(p[:12] for p in c.parents))
        self.message(f"Author: {c.committer}")
        self.message(f"Date:   {c.creation_date:%Y-%m-%d %H:%M:%S %Z}")
        for k, v in sorted(c.metadata.items()):
            self.message(f"Meta:   {k} = {v}")
        self.message(f"\n    {c.message}\n")

    def mapping(self, doc: Mapping[str, Any]) -> None:
        width = max(len(k) for k in doc)
        for k, v in doc.items():
            shown = json.dumps(v) if isinstance(v, dict | list) else v
            self.message(f"{k + ':':{width + 2}}{shown}")
