"""Maintenance commands: ``fsck`` and ``refs dump`` / ``refs restore``.

``fsck`` exits 0 only when the repository is clean, 1 when it found problems (dangling objects
and unreachable commits are reported but are not problems).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from graveler.cli.output import Output
from graveler.core import uri as uris
from graveler.maintenance.fsck import FsckReport, fsck
from graveler.maintenance.refdump import dump_refs, restore_refs

if TYPE_CHECKING:
    from graveler.client import Graveler

#: Exit code of ``fsck`` when it found problems.
EXIT_PROBLEMS = 1
_SHOWN = 20  # dangling items listed in human output (all of them with --json)


def fsck_command(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo = gv.repository(uris.parse(a.uri).repository)
    report = fsck(repo, verify_objects=a.verify_objects)
    if out.as_json:
        out.json(report.to_dict())
    else:
        _print_report(out, report)
    return 0 if report.clean else EXIT_PROBLEMS


def _print_report(out: Output, r: FsckReport) -> None:
    out.message(
        f"Checked {r.repository} ({r.namespace}): {r.commits} commits, {r.metaranges} "
        f"metaranges, {r.ranges} ranges, {r.entries} entries, {r.staged} staged entries, "
        f"{r.objects} objects"
    )
    for p in r.problems:
        out.message(f"[red]{p.kind.value}[/red] {p.subject}: {p.detail}")
    if r.expired_objects:
        out.message(
            f"{len(r.expired_objects)} object(s) of {r.expired_commits} expired commit(s) "
            "deleted by garbage collection (not a problem)"
        )
    dangling = [
        ("dangling object", r.dangling_objects),
        ("dangling tree file", r.dangling_tree_files),
        ("unreachable commit", r.unreachable_commits),
        ("temporary file", r.temporary_files),
    ]
    for what, items in dangling:
        if items:
            shown = ", ".join(items[:_SHOWN]) + (" ..." if len(items) > _SHOWN else "")
            out.message(f"{len(items)} {what}(s) (not a problem): {shown}")
    if r.clean:
        out.message("[green]Repository is clean.[/green]")
    else:
        out.message(f"[red]Repository has {len(r.problems)} problem(s).[/red]")


def refs_dump(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo = gv.repository(uris.parse(a.uri).repository)
    info = dump_refs(repo)
    if out.as_json:
        out.json(
            {
                "dump_id": info.dump_id,
                "location": info.location,
                "commits": info.commits,
                "branches": info.branches,
                "tags": info.tags,
                "uncommitted_branches": info.uncommitted_branches,
            }
        )
        return 0
    out.message(
        f"Refs of {repo.name} dumped to {info.location}: {info.commits} commits, "
        f"{info.branches} branches, {info.tags} tags (dump {info.dump_id})"
    )
    if info.uncommitted_branches:
        names = ", ".join(info.uncommitted_branches)
        out.message(f"[yellow]Uncommitted changes are not in the dump: {names}[/yellow]")
    return 0


def refs_restore(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    name = uris.parse(a.uri).repository
    repo = restore_refs(gv, name, a.namespace, a.dump)
    branches = repo.list_branches()
    if out.as_json:
        out.json(
            {
                "name": repo.name,
                "storage_namespace": repo.info.storage_namespace,
                "branches": [b.name for b in branches],
                "tags": [t.name for t in repo.list_tags()],
            }
        )
        return 0
    out.message(
        f"Repository {repo.name} restored from {repo.info.storage_namespace} with "
        f"{len(branches)} branch(es); run 'graveler fsck graveler://{repo.name}' to check it"
    )
    return 0
