"""Previews of objects: the head of CSV, JSON and text; Parquet schema, row count and first
rows (through pyarrow); images shown inline.

A preview never reads a whole large object: text kinds read the first ``HEAD_BYTES``;
Parquet reads the footer and the first row group (or only the footer when that row group is
larger than ``PARQUET_ROWS_BYTES``), seeking with ranged reads. Bytes are data, never code:
nothing is evaluated, and everything shown goes through the templates' escaping.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from graveler.repository import Repository
from graveler.storage.entry import ObjectEntry
from graveler.storage.objectstore import RangeReader

HEAD_BYTES = 64 * 1024
MAX_ROWS = 50
MAX_COLUMNS = 40
MAX_CELL = 200
PARQUET_ROWS_BYTES = 32 * 1024 * 1024
#: Content types served inline as images (never SVG: it can carry scripts).
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
_TEXT_EXTENSIONS = (".txt", ".md", ".log", ".yaml", ".yml", ".toml", ".ini", ".sql", ".py")


@dataclass
class Preview:
    """What the preview template shows. ``kind`` is one of csv, json, text, parquet, image
    or none; ``rows`` / ``columns`` hold a table, ``text`` a text head, ``facts`` labelled
    values (row count, schema...), ``note`` why a preview is partial or missing."""

    kind: str
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    text: str = ""
    facts: list[tuple[str, str]] = field(default_factory=list)
    schema: list[tuple[str, str]] = field(default_factory=list)
    truncated: bool = False
    note: str = ""


def kind_of(entry: ObjectEntry) -> str:
    """The preview kind of an object, from its name, then its content type."""
    name, ctype = entry.path.lower(), entry.content_type.lower()
    if name.endswith(".parquet") or ctype == "application/vnd.apache.parquet":
        return "parquet"
    if name.endswith((".csv", ".tsv")) or ctype in ("text/csv", "text/tab-separated-values"):
        return "csv"
    if name.endswith((".json", ".jsonl", ".ndjson")) or ctype.endswith("json"):
        return "json"
    if image_type(entry) is not None:
        return "image"
    if name.endswith(_TEXT_EXTENSIONS) or ctype.startswith("text/"):
        return "text"
    return "none"


def image_type(entry: ObjectEntry) -> str | None:
    """The content type to serve an image with, for the raster formats browsers show."""
    for ext, ctype in IMAGE_TYPES.items():
        if entry.path.lower().endswith(ext):
            return ctype
    return entry.content_type if entry.content_type in IMAGE_TYPES.values() else None


def preview(repo: Repository, entry: ObjectEntry) -> Preview:
    """The preview of ``entry`` (raises what reading the object raises)."""
    kind = kind_of(entry)
    if kind == "parquet":
        return _parquet(repo, entry)
    if kind in ("image", "none"):
        return Preview(kind)
    head, truncated = _head(repo, entry)
    if kind == "csv":
        return _csv(head, truncated, "\t" if entry.path.lower().endswith(".tsv") else ",")
    if kind == "json":
        return _json(head, truncated)
    return Preview("text", text=head, truncated=truncated)


def _head(repo: Repository, entry: ObjectEntry) -> tuple[str, bool]:
    with repo.open_entry(entry) as stream:
        data = stream.read(HEAD_BYTES + 1)
    truncated = len(data) > HEAD_BYTES
    return data[:HEAD_BYTES].decode("utf-8", errors="replace"), truncated


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= MAX_CELL else text[:MAX_CELL] + "…"


def _csv(head: str, truncated: bool, delimiter: str) -> Preview:
    lines = head.splitlines()
    if truncated and lines:
        lines = lines[:-1]  # the last line may be cut
    reader = csv.reader(lines, delimiter=delimiter)
    table = [[_cell(c) for c in row[:MAX_COLUMNS]] for row in reader]
    header, body = (table[0], table[1 : MAX_ROWS + 1]) if table else ([], [])
    more = truncated or len(table) > MAX_ROWS + 1
    return Preview("csv", columns=header, rows=body, truncated=more)


def _json(head: str, truncated: bool) -> Preview:
    if not truncated:
        try:
            doc = json.loads(head)
        except ValueError:
            pass  # JSON Lines, or not JSON at all: show the text
        else:
            return Preview("json", text=json.dumps(doc, indent=2, ensure_ascii=False)[:HEAD_BYTES])
    return Preview("json", text=head, truncated=truncated)


def _parquet(repo: Repository, entry: ObjectEntry) -> Preview:
    import pyarrow.parquet as pq  # the ui extra brings pyarrow; imported when needed

    with _seekable(repo, entry) as source:
        pf = pq.ParquetFile(source)
        meta = pf.metadata
        found = Preview("parquet")
        found.schema = [(f.name, str(f.type)) for f in pf.schema_arrow]
        found.facts = [
            ("Rows", f"{meta.num_rows:,}"),
            ("Row groups", str(meta.num_row_groups)),
            ("Columns", str(meta.num_columns)),
            ("Written by", meta.created_by or "unknown"),
        ]
        if meta.num_row_groups == 0:
            return found
        if meta.row_group(0).total_byte_size > PARQUET_ROWS_BYTES:
            found.note = "The first row group is too large to preview its rows."
            return found
        columns = pf.schema_arrow.names[:MAX_COLUMNS]
        batch = next(pf.iter_batches(batch_size=MAX_ROWS, row_groups=[0], columns=columns))
        found.columns = list(columns)
        found.rows = [[_cell(r[c]) for c in columns] for r in batch.to_pylist()]
        found.truncated = meta.num_rows > len(found.rows)
        return found


def _seekable(repo: Repository, entry: ObjectEntry) -> BinaryIO:
    """A seekable reader of the object: the store's stream when it can seek (local
    files), else the bytes in memory (small objects) or ranged reads (large ones)."""
    stream = repo.open_entry(entry)
    if stream.seekable():
        return stream
    stream.close()
    if entry.size <= 8 * 1024 * 1024 or entry.external:
        return io.BytesIO(repo.read_entry(entry))
    return io.BufferedReader(
        RangeReader(repo.store, entry.physical_address, entry.size), buffer_size=1024 * 1024
    )
