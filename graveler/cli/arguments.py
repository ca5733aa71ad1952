"""The arguments of every ``graveler`` command: one function per command adds its parser (and
its sub-commands) to the top-level ``COMMAND`` sub-parsers. :mod:`graveler.cli.parser` builds
the whole command line, or only the command that runs, from :data:`COMMANDS`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from graveler.cli.server_arguments import credentials_parser, serve_parser, ui_parser

EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    """Usage errors: the usage line, one line saying what is wrong, exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"graveler: error: {message}; see 'graveler --help'\n")
        sys.exit(EXIT_USAGE)


def _repo(sub: Any) -> None:
    repo = sub.add_parser("repo", help="create, list and delete repositories")
    rs = repo.add_subparsers(dest="action", required=True, parser_class=Parser)
    c = rs.add_parser("create", help="create a repository")
    c.add_argument("uri", metavar="graveler://REPO")
    c.add_argument(
        "namespace",
        nargs="?",
        default=None,
        metavar="NAMESPACE_URI",
        help="file:///path or s3://bucket/prefix (default: a directory under the home's data/)",
    )
    c.add_argument("--default-branch", default="main")
    rs.add_parser("list", help="list repositories")
    d = rs.add_parser("delete", help="delete a repository's refs (object data is kept)")
    d.add_argument("uri", metavar="graveler://REPO")


def _branch(sub: Any) -> None:
    br = sub.add_parser("branch", help="create, list, delete, reset, protect and prune branches")
    bs = br.add_subparsers(dest="action", required=True, parser_class=Parser)
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
    pr = bs.add_parser("prune", help="delete kept run branches idle for longer than an age")
    pr.add_argument("uri", metavar="graveler://REPO")
    pr.add_argument("--older-than", required=True, metavar="AGE", help="e.g. 90m, 12h, 7d, 2w")
    pr.add_argument("--prefix", required=True, help="run branch name prefix, e.g. airflow-")
    pr.add_argument("--dry-run", action="store_true", help="list them, delete nothing")
    _revert_arguments(bs.add_parser("revert", help="commit the inverse of commits"))


def _tag(sub: Any) -> None:
    tag = sub.add_parser("tag", help="create, list and delete tags")
    ts = tag.add_subparsers(dest="action", required=True, parser_class=Parser)
    c = ts.add_parser("create", help="tag a ref")
    c.add_argument("uri", metavar="graveler://REPO/TAG")
    c.add_argument("ref", metavar="graveler://REPO/REF")
    ts.add_parser("list", help="list tags").add_argument("uri", metavar="graveler://REPO")
    ts.add_parser("delete", help="delete a tag").add_argument("uri", metavar="graveler://REPO/TAG")


def _fs(sub: Any) -> None:
    fs = sub.add_parser("fs", help="objects: upload, cat, stat, ls, rm")
    fss = fs.add_subparsers(dest="action", required=True, parser_class=Parser)
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


def _commit(sub: Any) -> None:
    c = sub.add_parser("commit", help="commit a branch's staged changes")
    c.add_argument("uri", metavar="graveler://REPO/BRANCH")
    c.add_argument("-m", "--message", required=True)
    c.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")


def _show(sub: Any) -> None:
    sub.add_parser("show", help="the commit a ref resolves to").add_argument(
        "uri", metavar="graveler://REPO/REF"
    )


def _diff(sub: Any) -> None:
    df = sub.add_parser(
        "diff", help="differences between two refs, or a branch's uncommitted changes"
    )
    df.add_argument("left", metavar="graveler://REPO/LEFT")
    df.add_argument("right", nargs="?", metavar="graveler://REPO/RIGHT")
    df.add_argument(
        "--files",
        action="store_true",
        help="list a table's metadata and data files instead of its versions (Delta, Iceberg)",
    )


def _merge(sub: Any) -> None:
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
    _merge_options(m)


def _merge_options(m: argparse.ArgumentParser) -> None:
    """lakectl's merge options (see :mod:`graveler.versioning.merge`)."""
    ff = m.add_mutually_exclusive_group()
    ff.add_argument(
        "--no-ff",
        dest="fast_forward",
        action="store_false",
        help="always make a merge commit, even when the destination could fast-forward",
    )
    ff.add_argument(
        "--ff-only", action="store_true", help="merge only by fast-forward, else fail (exit 4)"
    )
    m.add_argument(
        "--squash",
        action="store_true",
        help="one commit with the destination's head as its only parent",
    )
    m.add_argument(
        "--meta",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="metadata of the merge commit (repeatable)",
    )
    m.add_argument(
        "--allow-empty",
        action="store_true",
        help="make the merge commit even when the source is already merged",
    )


def _fsck(sub: Any) -> None:
    f = sub.add_parser(
        "fsck", help="check refs, history, trees and objects; exit 0 only when clean"
    )
    f.add_argument("uri", metavar="graveler://REPO")
    f.add_argument(
        "--verify-objects",
        action="store_true",
        help="also read every referenced object and check its SHA-256 (reads all the data)",
    )


def _refs(sub: Any) -> None:
    refs = sub.add_parser("refs", help="back up and restore commits, branches and tags")
    rs = refs.add_subparsers(dest="action", required=True, parser_class=type(refs))
    rs.add_parser("dump", help="write a refs dump into the storage namespace").add_argument(
        "uri", metavar="graveler://REPO"
    )
    r = rs.add_parser("restore", help="recreate a repository's refs from a dump")
    r.add_argument("uri", metavar="graveler://REPO")
    r.add_argument("namespace", metavar="NAMESPACE_URI", help="where the dump is (file://, s3://)")
    r.add_argument("--dump", default=None, metavar="DUMP_ID", help="default: the newest dump")


def _gc(sub: Any) -> None:
    g = sub.add_parser("gc", help="delete objects no retained commit or staged entry needs")
    g.add_argument("uri", metavar="graveler://REPO")
    g.add_argument("--dry-run", action="store_true", help="only print what would be deleted")
    g.add_argument("--spark", action="store_true", help="run as a Spark job (graveler_spark)")
    g.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="Spark master for --spark (default: spark.master, e.g. from spark-submit, "
        "else local[*])",
    )
    g.add_argument("--rules", metavar="FILE", help="retention rules JSON (lakeFS format)")
    g.add_argument("--retention-days", type=float, default=None, metavar="DAYS")
    g.add_argument(
        "--branch-retention",
        action="append",
        default=[],
        metavar="BRANCH=DAYS",
        help="retention of one branch (repeatable)",
    )
    g.add_argument(
        "--grace-hours",
        type=float,
        default=24.0,
        metavar="HOURS",
        help="never delete objects younger than this (default 24)",
    )


def _log(sub: Any) -> None:
    lg = sub.add_parser("log", help="commit history of a ref (every ancestor, newest first)")
    lg.add_argument("uri", metavar="graveler://REPO/REF")
    lg.add_argument("--amount", "-n", type=int, default=None, help="list at most N commits")
    lg.add_argument("--first-parent", action="store_true", help="follow first parents only")
    lg.add_argument("--no-merges", action="store_true", help="skip merge commits")
    lg.add_argument(
        "--objects",
        action="append",
        default=[],
        metavar="PATH[,PATH]",
        help="only commits that changed these objects",
    )
    lg.add_argument(
        "--prefixes",
        action="append",
        default=[],
        metavar="PREFIX[,PREFIX]",
        help="only commits that changed objects under these prefixes",
    )
    lg.add_argument(
        "--since", default=None, metavar="RFC3339", help="stop at commits older than this time"
    )
    lg.add_argument(
        "--until", default=None, metavar="RFC3339", help="hide commits newer than this time"
    )
    lg.add_argument("--stop-at", default=None, metavar="REF", help="end with this commit")
    lg.add_argument("--show-meta-range-id", action="store_true")


def _cherry_pick(sub: Any) -> None:
    cp = sub.add_parser("cherry-pick", help="apply the changes of a commit to a branch")
    cp.add_argument("ref", metavar="graveler://REPO/REF")
    cp.add_argument("branch", metavar="graveler://REPO/BRANCH")
    _commit_options(cp, "the picked commit's")


def _revert(sub: Any) -> None:
    _revert_arguments(sub.add_parser("revert", help="commit the inverse of commits"))


def _revert_arguments(parser: argparse.ArgumentParser) -> None:
    """``revert`` and ``branch revert``."""
    parser.add_argument("branch", metavar="graveler://REPO/BRANCH")
    parser.add_argument(
        "refs",
        nargs="+",
        metavar="REF",
        help="commits to revert, in order (refs or graveler:// URIs)",
    )
    _commit_options(parser, "'Revert <id>: <message>'")


def _commit_options(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "-m",
        "--parent-number",
        type=int,
        default=None,
        help="for a merge commit: the parent (from 1) the change is measured against",
    )
    p.add_argument("--message", default=None, help=f"commit message (default: {default})")
    p.add_argument(
        "--meta",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="commit metadata (replaces the default)",
    )
    p.add_argument("--allow-empty", action="store_true", help="commit even if nothing changes")


def _actions(sub: Any) -> None:
    act = sub.add_parser("actions", help="hook runs and action files")
    acts = act.add_subparsers(dest="action", required=True, parser_class=type(act))
    runs = acts.add_parser("runs", help="recorded hook runs")
    rs = runs.add_subparsers(dest="runs_action", required=True, parser_class=type(act))
    ls = rs.add_parser("list", help="hook runs, newest first")
    ls.add_argument("uri", metavar="graveler://REPO")
    ls.add_argument("--branch", default=None, help="only runs of this branch")
    ls.add_argument("--commit", default=None, help="only runs of this commit ID")
    ls.add_argument("--amount", type=int, default=100)
    ls.add_argument("--after", default=None, metavar="RUN_ID", help="page on after this run")
    d = rs.add_parser("describe", help="one hook run and its hooks")
    d.add_argument("uri", metavar="graveler://REPO")
    d.add_argument("run_id", metavar="RUN_ID")
    v = acts.add_parser("validate", help="check an action file")
    v.add_argument("path", metavar="FILE")


def _import(sub: Any) -> None:
    imp = sub.add_parser("import", help="commit existing objects by reference (no copy)")
    imp.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="URI",
        help="file:///dir or s3://bucket/prefix; outside every namespace",
    )
    imp.add_argument(
        "--to",
        dest="dest",
        required=True,
        metavar="graveler://REPO/BRANCH/PATH",
        help="branch and path prefix (what was under it is replaced)",
    )
    imp.add_argument("-m", "--message", default=None)
    imp.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE")


#: Every command and what builds its parser, in the order ``--help`` lists them.
COMMANDS: dict[str, Callable[[Any], None]] = {
    "repo": _repo,
    "branch": _branch,
    "tag": _tag,
    "fs": _fs,
    "commit": _commit,
    "log": _log,
    "cherry-pick": _cherry_pick,
    "revert": _revert,
    "show": _show,
    "diff": _diff,
    "merge": _merge,
    "actions": _actions,
    "import": _import,
    "fsck": _fsck,
    "refs": _refs,
    "gc": _gc,
    "ui": ui_parser,
    "serve": serve_parser,
    "credentials": credentials_parser,
}
