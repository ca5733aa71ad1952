"""Argument parsing and dispatch for the ``graveler`` CLI."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from graveler.cli import actions, commands, history, maintenance
from graveler.cli import gc as gc_command
from graveler.cli.output import Output
from graveler.errors import GravelerError

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"graveler: error: {message}; see 'graveler --help'\n")
        sys.exit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
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
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    repo = sub.add_parser("repo", help="create, list and delete repositories")
    rs = repo.add_subparsers(dest="action", required=True, parser_class=_Parser)
    c = rs.add_parser("create", help="create a repository")
    c.add_argument("uri", metavar="graveler://REPO")
    c.add_argument("namespace", metavar="NAMESPACE_URI", help="file:///path or s3://bucket/prefix")
    c.add_argument("--default-branch", default="main")
    rs.add_parser("list", help="list repositories")
    d = rs.add_parser("delete", help="delete a repository's refs (object data is kept)")
    d.add_argument("uri", metavar="graveler://REPO")

    br = sub.add_parser("branch", help="create, list, delete, reset and protect branches")
    bs = br.add_subparsers(dest="action", required=True, parser_class=_Parser)
    c = bs.add_parser("create", help="create a branch from a ref")
    c.add_argument("uri", metavar="graveler://REPO/BRANCH")
    c.add_argument("--source", required=True, metavar="graveler://REPO/REF")
    bs.add_parser("list", help="list branches").add_argument("uri", metavar="graveler://REPO")
    bs.add_parser("delete", help="delete a branch").add_argument(
        "uri", metavar="graveler://REPO/BRANCH"
    )
    r = bs.add_parser("reset", help="drop uncommitted changes (--hard: also move the head)")
    r.add_argument("uri", metavar="graveler://REPO/BRANCH")
    r.add_argument("--prefix", default=None, help="only changes under this path prefix")
    r.add_argument(
        "--hard",
        default=None,
        metavar="REF",
        help="move the branch to REF and drop every uncommitted change",
    )
    bs.add_parser("protect", help="allow merges only").add_argument(
        "uri", metavar="graveler://REPO/BRANCH"
    )

    tag = sub.add_parser("tag", help="create, list and delete tags")
    ts = tag.add_subparsers(dest="action", required=True, parser_class=_Parser)
    c = ts.add_parser("create", help="tag a ref")
    c.add_argument("uri", metavar="graveler://REPO/TAG")
    c.add_argument("ref", metavar="graveler://REPO/REF")
    ts.add_parser("list", help="list tags").add_argument("uri", metavar="graveler://REPO")
    ts.add_parser("delete", help="delete a tag").add_argument("uri", metavar="graveler://REPO/TAG")

    fs = sub.add_parser("fs", help="objects: upload, cat, stat, ls, rm")
    fss = fs.add_subparsers(dest="action", required=True, parser_class=_Parser)
    u = fss.add_parser("upload", help="upload a file or a directory")
    u.add_argument("local", metavar="LOCAL_PATH")
    u.add_argument("uri", metavar="graveler://REPO/BRANCH/PATH")
    u.add_argument("--recursive", "-r", action="store_true")
    fss.add_parser("cat", help="object bytes to stdout").add_argument(
        "uri", metavar="graveler://REPO/REF/PATH"
    )
    st = fss.add_parser("stat", help="object metadata")
    st.add_argument("uri", metavar="graveler://REPO/REF/PATH")
    st.add_argument("--staged", action="store_true", help="only what is staged (REF: a branch)")
    ls = fss.add_parser("ls", help="list objects")
    ls.add_argument("uri", metavar="graveler://REPO/REF/[PREFIX]")
    ls.add_argument("--recursive", "-r", action="store_true")
    ls.add_argument("--staged", action="store_true", help="only what is staged (REF: a branch)")
    rm = fss.add_parser("rm", help="delete objects (staged until commit)")
    rm.add_argument("uri", metavar="graveler://REPO/BRANCH/PATH")
    rm.add_argument("--recursive", "-r", action="store_true")

    c = sub.add_parser("commit", help="commit a branch's staged changes")
    c.add_argument("uri", metavar="graveler://REPO/BRANCH")
    c.add_argument("-m", "--message", required=True)
    c.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")

    history.add_parsers(sub, bs)
    sub.add_parser("show", help="the commit a ref resolves to").add_argument(
        "uri", metavar="graveler://REPO/REF"
    )

    df = sub.add_parser(
        "diff", help="differences between two refs, or a branch's uncommitted changes"
    )
    df.add_argument("left", metavar="graveler://REPO/LEFT")
    df.add_argument("right", nargs="?", metavar="graveler://REPO/RIGHT")

    m = sub.add_parser("merge", help="merge a ref into a branch")
    m.add_argument("source", metavar="graveler://REPO/SOURCE")
    m.add_argument("dest", metavar="graveler://REPO/DEST")
    m.add_argument("--strategy", choices=["dest-wins", "source-wins"], default=None)
    m.add_argument("-m", "--message", default=None)
    m.add_argument(
        "--resolver",
        default=None,
        metavar="MODULE:FUNCTION",
        help="conflict resolver, an installed callable (before --strategy)",
    )

    actions.add_parsers(sub)
    maintenance.add_parsers(sub)
    gc_command.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = Output(args.json)
    try:
        return commands.dispatch(args, out)
    except GravelerError as exc:
        _report(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("graveler: interrupted\n")
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _report(exc: GravelerError) -> None:
    text = " ".join(str(exc).split()) or type(exc).__name__
    notes = " ".join(getattr(exc, "__notes__", []))
    sys.stderr.write(f"graveler: {text}{' (' + notes + ')' if notes else ''}\n")
