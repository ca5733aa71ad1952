"""The ``graveler`` command line's arguments: every subcommand and option, and nothing else.

Kept free of engine imports, so that parsing (and ``--help``) costs no more than ``argparse``;
:mod:`graveler.cli.app` imports a command's code only once it knows which command runs. The
commands' own arguments are in :mod:`graveler.cli.arguments`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from graveler.cli.arguments import COMMANDS, EXIT_USAGE, Parser

__all__ = ["COMMANDS", "EXIT_USAGE", "build_parser", "command_of"]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of the whole command line. Given the ``argv`` it is to parse, it may hold
    only the command ``argv`` names (all of that command, and the global options): what it
    parses is the same, and building it costs a fraction of the whole. Anything it cannot
    tell for sure (no command, a help option, an option it does not know) gets the whole."""
    only = command_of(argv) if argv is not None else None
    p = Parser(
        prog="graveler",
        description="Git for data lakes: branches, commits and merges over object storage.",
    )
    p.add_argument(
        "--home",
        default=None,
        help="state directory (env GRAVELER_HOME, "
        "default ./.graveler): SQLite database, cache, default namespaces",
    )
    p.add_argument(
        "--database-url",
        default=None,
        help="SQLAlchemy URL of the refs database (env GRAVELER_DATABASE_URL)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document per command")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for name, build in COMMANDS.items():
        if only is None or name == only:
            build(sub)
    for child in _subparsers(p):
        _json_anywhere(child)
    return p


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser below ``parser`` (its commands, their actions...)."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += [child, *_subparsers(child)]
    return found


def _json_anywhere(parser: argparse.ArgumentParser) -> None:
    """``--json`` after a command as well as before it (``graveler credentials create
    --json``): set only when given there, so that it never undoes one given before."""
    parser.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )


#: The global options that take a value (argparse also accepts unambiguous prefixes).
_VALUED = ("--home", "--database-url")
_FLAGS = ("--json",)


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, when it is certain: the first word after the global
    options, a known command, and no help option anywhere; else None."""
    rest = list(argv)
    while rest:
        word = rest.pop(0)
        if word in ("-h", "--help", "--"):
            return None
        if not word.startswith("-"):
            known = word in COMMANDS and not ({"-h", "--help"} & set(rest))
            return word if known else None
        name = word.split("=", 1)[0]
        if len(name) < 3 or not any(o.startswith(name) for o in _VALUED + _FLAGS):
            return None
        if any(o.startswith(name) for o in _VALUED) and any(o.startswith(name) for o in _FLAGS):
            return None  # ambiguous: argparse says so
        if "=" not in word and any(o.startswith(name) for o in _VALUED):
            if not rest:
                return None
            rest.pop(0)
    return None
