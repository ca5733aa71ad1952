"""The ``graveler`` command line's arguments: every subcommand and option, and nothing else.

Kept free of engine imports, so that parsing (and ``--help``) costs no more than ``argparse``;
:mod:`graveler.cli.app` imports a command's code only once it knows which command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

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

    br = sub.add_parser("branch", help="create, list, delete, reset, protect and prune branches")
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
    pr = bs.add_parser("prune", help="delete kept run branches idle for longer than an age")
    pr.add_argument("uri", metavar="graveler://REPO")
    pr.add_argument("--older-than", required=True, metavar="AGE", help="e.g. 90m, 12h, 7d, 2w")
    pr.add_argument("--prefix", required=True, help="run branch name prefix, e.g. airflow-")
    pr.add_argument("--dry-run", action="store_true", help="list them, delete nothing")

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

    _history_parsers(sub, bs)
    sub.add_parser("show", help="the commit a ref resolves to").add_argument(
        "uri", metavar="graveler://REPO/REF"
    )

    df = sub.add_parser(
        "diff", help="differences between two refs, or a branch's uncommitted changes"
    )
    df.add_argument("left", metavar="graveler://REPO/LEFT")
    df.add_argument("right", nargs="?", metavar="graveler://REPO/RIGHT")
    df.add_argument(
        "--files",
        action="store_true",
        help="list a table's log and data files instead of its versions (Delta Lake tables)",
    )

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

    _actions_parsers(sub)
    _maintenance_parsers(sub)
    _gc_parser(sub)
    _ui_parser(sub)
    _serve_parser(sub)
    _credentials_parser(sub)
    return p


def _maintenance_parsers(sub: Any) -> None:
    """Add ``fsck`` and ``refs`` to the CLI's sub-command parsers."""
    f = sub.add_parser(
        "fsck", help="check refs, history, trees and objects; exit 0 only when clean"
    )
    f.add_argument("uri", metavar="graveler://REPO")
    f.add_argument(
        "--verify-objects",
        action="store_true",
        help="also read every referenced object and check its SHA-256 (reads all the data)",
    )
    refs = sub.add_parser("refs", help="back up and restore commits, branches and tags")
    rs = refs.add_subparsers(dest="action", required=True, parser_class=type(refs))
    rs.add_parser("dump", help="write a refs dump into the storage namespace").add_argument(
        "uri", metavar="graveler://REPO"
    )
    r = rs.add_parser("restore", help="recreate a repository's refs from a dump")
    r.add_argument("uri", metavar="graveler://REPO")
    r.add_argument("namespace", metavar="NAMESPACE_URI", help="where the dump is (file://, s3://)")
    r.add_argument("--dump", default=None, metavar="DUMP_ID", help="default: the newest dump")


def _gc_parser(sub: Any) -> None:
    """The ``gc`` subcommand's arguments."""
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


def _history_parsers(sub: Any, branch_sub: Any) -> None:
    """Add ``log``, ``cherry-pick`` and ``revert`` to the top-level commands and ``revert``
    to ``branch``."""
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
    cp = sub.add_parser("cherry-pick", help="apply the changes of a commit to a branch")
    cp.add_argument("ref", metavar="graveler://REPO/REF")
    cp.add_argument("branch", metavar="graveler://REPO/BRANCH")
    _commit_options(cp, "the picked commit's")
    for parser in (
        sub.add_parser("revert", help="commit the inverse of commits"),
        branch_sub.add_parser("revert", help="commit the inverse of commits"),
    ):
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


def _actions_parsers(sub: Any) -> None:
    """Add ``actions`` and ``import`` to the CLI's sub-command parsers."""
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


DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def _ui_parser(sub: Any) -> None:
    """``graveler ui`` (its code, in :mod:`graveler.cli.ui`, imports the web stack)."""
    p = sub.add_parser("ui", help="serve the web UI (read-only unless --allow-writes)")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on ({DEFAULT_HOST})")
    p.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"port ({DEFAULT_PORT}; 0: any free one)"
    )
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="offer merge, revert and delete-branch actions (default: read-only)",
    )


SERVE_PORT = 8000


def _serve_parser(sub: Any) -> None:
    """``graveler serve`` (its code, in :mod:`graveler.cli.serve`, imports the server stack)."""
    p = sub.add_parser(
        "serve", help="serve the web UI, the S3 gateway and the Iceberg REST catalog on one port"
    )
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on ({DEFAULT_HOST})")
    p.add_argument(
        "--port", type=_port, default=SERVE_PORT, help=f"port ({SERVE_PORT}; 0: any free one)"
    )
    p.add_argument("--workers", type=int, default=1, help="worker processes (1)")
    p.add_argument("--region", default="us-east-1", help="the S3 region reported (us-east-1)")
    p.add_argument("--domain", default=None, help="enable virtual-host S3 addressing: REPO.DOMAIN")
    p.add_argument(
        "--namespace-root",
        default=None,
        metavar="URI",
        help="where S3 CreateBucket puts new repositories (default: the home's data directory)",
    )
    p.add_argument(
        "--read-only-ui",
        action="store_true",
        help="the web UI offers no merge, revert or delete, even to signed-in keys",
    )


def _credentials_parser(sub: Any) -> None:
    cred = sub.add_parser("credentials", help="create, list and delete access keys of the server")
    cs = cred.add_subparsers(dest="action", required=True, parser_class=_Parser)
    c = cs.add_parser("create", help="create an access key (its secret is shown once)")
    c.add_argument(
        "--repository",
        action="append",
        default=[],
        metavar="REPO",
        help="limit the key to this repository (repeatable; default: every repository)",
    )
    c.add_argument("--read-only", action="store_true", help="reads only")
    c.add_argument("--admin", action="store_true", help="may also create repositories")
    c.add_argument("--description", default="", help="a note shown by 'credentials list'")
    cs.add_parser("list", help="list access keys (never their secrets)")
    d = cs.add_parser("delete", help="delete an access key")
    d.add_argument("access_key_id", metavar="ACCESS_KEY_ID")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 0 to 65535, not {text!r}")
    return port
