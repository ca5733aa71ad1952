"""``graveler branch-protect list|add|delete graveler://REPO [PATTERN]``: a repository's
branch protection rules (lakectl's ``branch-protect``). A rule applies to every branch whose
name matches its pattern, including branches created later, through every interface.

``add`` takes ``--block`` (``staging_write``, ``commit``, ``delete``; repeatable or
comma-separated); without it a rule blocks staging writes and commits, as lakeFS's do. The
arguments are in :mod:`graveler.cli.rules_arguments`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from graveler.cli.output import Output
from graveler.cli.shared import done, repo_of
from graveler.core.protection import ProtectionRule

if TYPE_CHECKING:
    from graveler.client import Graveler


def rule_doc(rule: ProtectionRule) -> dict[str, Any]:
    return {"pattern": rule.pattern, "blocked_actions": rule.actions}


def protect_list(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = repo_of(gv, a.uri)
    rules = repo.protection_rules()
    if out.as_json:
        out.json([rule_doc(r) for r in rules])
    else:
        rows = [(r.pattern, ", ".join(r.actions)) for r in rules]
        out.table(None, ["PATTERN", "BLOCKS"], rows)
    return 0


def protect_add(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = repo_of(gv, a.uri)
    blocked = None
    if a.block is not None:
        blocked = [name.strip() for given in a.block for name in given.split(",") if name.strip()]
    added = repo.add_protection_rule(a.pattern, blocked)
    text = f"Branches matching {added.pattern!r} now refuse: {', '.join(added.actions)}"
    done(out, rule_doc(added), text)
    return 0


def protect_delete(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = repo_of(gv, a.uri)
    repo.delete_protection_rule(a.pattern)
    done(out, {"deleted": a.pattern}, f"Rule {a.pattern!r} removed")
    return 0
