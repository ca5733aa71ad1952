"""The arguments of the commands that keep a repository's rules: ``graveler branch-protect``
(its code: :mod:`graveler.cli.protection`) and ``graveler gc-rules`` (:mod:`graveler.cli.gc`).
Free of engine imports, as every parser is (see :mod:`graveler.cli.parser`)."""

from __future__ import annotations

from typing import Any


def protect_parser(sub: Any) -> None:
    bp = sub.add_parser(
        "branch-protect", help="branch protection rules: patterns and what they block"
    )
    actions = bp.add_subparsers(dest="action", required=True, parser_class=type(bp))
    actions.add_parser("list", help="list the rules").add_argument("uri", metavar="graveler://REPO")
    add = actions.add_parser("add", help="add a rule for a pattern of branch names")
    add.add_argument("uri", metavar="graveler://REPO")
    add.add_argument("pattern", metavar="PATTERN", help="fnmatch pattern, e.g. 'release-*'")
    add.add_argument(
        "--block",
        action="append",
        default=None,
        metavar="ACTION",
        help="what the rule blocks: staging_write, commit, delete; repeat or separate with "
        "commas (default: staging_write and commit)",
    )
    delete = actions.add_parser("delete", help="remove the rule of a pattern")
    delete.add_argument("uri", metavar="graveler://REPO")
    delete.add_argument("pattern", metavar="PATTERN")


def gc_rules_parser(sub: Any) -> None:
    g = sub.add_parser("gc-rules", help="the retention rules a repository keeps for gc")
    actions = g.add_subparsers(dest="action", required=True, parser_class=type(g))
    actions.add_parser("get", help="show them").add_argument("uri", metavar="graveler://REPO")
    put = actions.add_parser("set", help="keep the rules of a file (lakeFS's JSON shape)")
    put.add_argument("uri", metavar="graveler://REPO")
    put.add_argument(
        "file", metavar="FILE", help='{"default_retention_days": 21, "branches": [...]}'
    )
    actions.add_parser("delete", help="keep none").add_argument("uri", metavar="graveler://REPO")
