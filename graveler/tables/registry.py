"""The table formats this build knows, imported on first use.

Each entry names a module exposing ``FORMAT``, an object satisfying
:class:`graveler.tables.port.TableFormat`. A format whose module (or the library it needs)
cannot be imported is skipped: its tables are then merged as plain files.
"""

from __future__ import annotations

import functools
import importlib

from graveler.tables.port import TableFormat

#: Modules of the known formats, in the order they are asked.
FORMAT_MODULES: tuple[str, ...] = ("graveler.tables.delta", "graveler.tables.iceberg")


@functools.cache
def formats() -> tuple[TableFormat, ...]:
    """The formats that could be loaded."""
    loaded: list[TableFormat] = []
    for name in FORMAT_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        loaded.append(module.FORMAT)
    return tuple(loaded)


def table_of(
    path: str, known: tuple[TableFormat, ...] | None = None
) -> tuple[TableFormat, str] | None:
    """The format and root of the table whose metadata ``path`` is, or None."""
    for fmt in formats() if known is None else known:
        root = fmt.table_root(path)
        if root is not None:
            return fmt, root
    return None
