"""MkDocs hook: the command-line reference, generated from the CLI's own argument parser.

A page holding the marker ``<!-- graveler-cli-help -->`` gets, in its place, one section per
command and sub-command of ``graveler`` with the ``--help`` text argparse prints for it, so the
reference cannot drift from the parser. Help is formatted at a fixed width (88 columns), whatever
the terminal running the build.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from typing import Any

MARKER = "<!-- graveler-cli-help -->"
WIDTH = "88"


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser``, depth first, with the words that reach it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def render() -> str:
    """Markdown for every command's help, at a fixed width."""
    from graveler.cli.app import build_parser

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parts = []
        for path, parser in _commands(build_parser(), ("graveler",)):
            level = "#" * min(len(path) + 1, 4)
            parts.append(f"{level} `{' '.join(path)}`\n\n```text\n{parser.format_help()}```\n")
        return "\n".join(parts)
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the marker, where a page has it, with the generated reference."""
    return markdown.replace(MARKER, render()) if MARKER in markdown else markdown
