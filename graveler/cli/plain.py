"""Printing what rich would print, without importing rich, where that is exactly possible.

rich costs more to import than Python takes to start, and most calls of the CLI print a few
lines into a pipe, where rich adds no colour. The CLI's :class:`~graveler.cli.output.Output`
therefore prints plain text itself when:

* the output stream is not a terminal and no environment variable tells rich otherwise
  (:func:`plain_stream`);
* the text holds nothing rich would change: no ``[`` (markup), no ``:name:`` that could be an
  emoji code (times such as ``10:30:15`` are fine: no emoji code is two digits), no control
  character other than a newline (rich drops some and expands tabs) (:func:`plain_text`);
* for tables, every cell is printable ASCII (so its width is its length) and the table fits
  the width rich would use (:func:`plain_table`).

Otherwise it hands the same text to rich, which prints it as before. ``tests/cli`` checks the
two agree on text and tables of every kind the CLI prints.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import TextIO

#: rich's emoji code pattern (``:name:``, ``:name-emoji:``, ``:name-text:``).
_EMOJI = re.compile(r"(:(\S*?)(?:(?:\-)(emoji|text))?:)")
#: Environment variables that can make rich treat a pipe as a terminal.
_RICH_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE")


def plain_stream(stream: TextIO) -> bool:
    """Whether rich would print to ``stream`` as to a plain file: not a terminal, and no
    variable of :data:`_RICH_ENV` set."""
    if any(os.environ.get(name) for name in _RICH_ENV):
        return False
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):
        return False


def plain_text(text: str) -> bool:
    """Whether rich prints ``text`` (markup and emoji codes on) exactly as it is."""
    if "[" in text:
        return False
    if any(not (c.isprintable() or c == "\n") for c in text):
        return False
    return all(_time_like(m.group(2)) for m in _EMOJI.finditer(text))


def _time_like(name: str) -> bool:
    return name == "" or (len(name) <= 2 and name.isdigit())


def output_width() -> int:
    """The width rich lays tables out in: the size of the first of stdin, stdout and stderr
    that is a terminal, overridden by a numeric ``COLUMNS``, else 80."""
    width = None
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    return width or 80


def plain_table(
    columns: Sequence[str], rows: Sequence[Sequence[str]], width: int | None
) -> str | None:
    """The table as rich prints it without a terminal (``show_edge=False``, bold header), or
    None when that is not exactly knowable here: a cell that is not printable ASCII or that
    rich would change, or a table wider than ``width`` (rich would wrap it)."""
    cells = [*columns, *(c for row in rows for c in row)]
    if width is None or any(not (c.isascii() and plain_text(c)) for c in cells):
        return None
    widths = [max(len(c) for c in column) for column in zip(columns, *rows, strict=True)]
    if sum(widths) + 3 * len(widths) - 1 > width:
        return None

    def line(cells: Sequence[str], sep: str) -> str:
        return sep.join(f" {c.ljust(w)} " for c, w in zip(cells, widths, strict=True)) + "\n"

    rule = "╇".join("━" * (w + 2) for w in widths) + "\n"
    return line(columns, "┃") + rule + "".join(line(row, "│") for row in rows)


def write(text: str, stream: TextIO | None = None) -> None:
    """``text`` and a newline, as rich's ``print`` ends a line."""
    (stream or sys.stdout).write(text + "\n")
