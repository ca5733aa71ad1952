"""Which function runs each command, and the one place that opens the client for it.

A command's module is imported only when that command runs (``graveler fsck`` loads the
checker, ``graveler ui`` the web stack, ``graveler gc`` garbage collection, and none of them
loads the others'), so every command starts with what it needs and nothing more.
"""

from __future__ import annotations

import argparse
import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graveler.cli.output import Output
    from graveler.cli.shared import Handler

_C, _FS, _H = "graveler.cli.commands", "graveler.cli.fs", "graveler.cli.history"
_A, _M = "graveler.cli.actions", "graveler.cli.maintenance"
_P = "graveler.cli.protection"

#: Command name (``command_action[_runs-action]``) -> (module, function).
HANDLERS: dict[str, tuple[str, str]] = {
    "repo_create": (_C, "repo_create"),
    "repo_list": (_C, "repo_list"),
    "repo_delete": (_C, "repo_delete"),
    "branch_create": (_C, "branch_create"),
    "branch_list": (_C, "branch_list"),
    "branch_delete": (_C, "branch_delete"),
    "branch_reset": (_C, "branch_reset"),
    "branch_protect": (_C, "branch_protect"),
    "branch_prune": (_C, "branch_prune"),
    "branch_revert": (_H, "revert"),
    "branch-protect_list": (_P, "protect_list"),
    "branch-protect_add": (_P, "protect_add"),
    "branch-protect_delete": (_P, "protect_delete"),
    "tag_create": (_C, "tag_create"),
    "tag_list": (_C, "tag_list"),
    "tag_delete": (_C, "tag_delete"),
    "fs_upload": (_FS, "fs_upload"),
    "fs_cat": (_FS, "fs_cat"),
    "fs_stat": (_FS, "fs_stat"),
    "fs_ls": (_FS, "fs_ls"),
    "fs_rm": (_FS, "fs_rm"),
    "commit": (_C, "commit"),
    "show": (_C, "show"),
    "diff": (_C, "diff"),
    "merge": (_C, "merge"),
    "log": (_H, "log"),
    "cherry-pick": (_H, "cherry_pick"),
    "revert": (_H, "revert"),
    "actions_runs_list": (_A, "runs_list"),
    "actions_runs_describe": (_A, "runs_describe"),
    "actions_validate": (_A, "validate"),
    "import": (_A, "import_command"),
    "fsck": (_M, "fsck_command"),
    "refs_dump": (_M, "refs_dump"),
    "refs_restore": (_M, "refs_restore"),
    "ui": ("graveler.cli.ui", "ui"),
    "serve": ("graveler.cli.serve", "serve"),
    "credentials_create": ("graveler.cli.serve", "credentials_create"),
    "credentials_list": ("graveler.cli.serve", "credentials_list"),
    "credentials_delete": ("graveler.cli.serve", "credentials_delete"),
    "gc": (_C, "gc"),
    "gc-rules_get": ("graveler.cli.gc", "rules_get"),
    "gc-rules_set": ("graveler.cli.gc", "rules_set"),
    "gc-rules_delete": ("graveler.cli.gc", "rules_delete"),
}


def command_name(args: argparse.Namespace) -> str:
    parts = [args.command, getattr(args, "action", None), getattr(args, "runs_action", None)]
    return "_".join(p for p in parts if p)


def handler(name: str) -> Handler:
    """The function of command ``name``, its module imported now."""
    module, function = HANDLERS[name]
    found: Handler = getattr(importlib.import_module(module), function)
    return found


def dispatch(args: argparse.Namespace, out: Output) -> int:
    """Run the parsed command with a client opened from ``--home`` / ``--database-url``."""
    run = handler(command_name(args))
    from graveler.client import Graveler

    with Graveler(home=args.home, database_url=args.database_url) as gv:
        return run(gv, args, out)
