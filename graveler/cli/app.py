"""Entry point of the ``graveler`` CLI, importing only what the command needs.

Arguments are parsed by :mod:`graveler.cli.parser` (argparse only). ``repo list`` on a SQLite
database is answered by :mod:`graveler.cli.quick` with the standard library alone; every
other command imports its own module (:mod:`graveler.cli.registry`) and the engine it uses,
on the embedded store for SQLite (no SQLAlchemy) and printing without rich into a pipe
(:mod:`graveler.cli.plain`). Start-up is what scripts that call the CLI in a loop pay on
every call.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from graveler.cli.parser import EXIT_USAGE, build_parser
from graveler.core.errors import GravelerError

__all__ = ["EXIT_USAGE", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(words).parse_args(words)
    try:
        return _run(args)
    except GravelerError as exc:
        _report(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("graveler: interrupted\n")
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _run(args: object) -> int:
    from graveler.cli import quick

    answered = quick.answer(args)
    if answered is not None:
        return answered
    from graveler.cli import registry
    from graveler.cli.output import Output

    return registry.dispatch(args, Output(getattr(args, "json", False)))  # type: ignore[arg-type]


def _report(exc: GravelerError) -> None:
    text = " ".join(str(exc).split()) or type(exc).__name__
    notes = " ".join(getattr(exc, "__notes__", []))
    sys.stderr.write(f"graveler: {text}{' (' + notes + ')' if notes else ''}\n")
