"""``graveler actions`` (hook runs and action files) and ``graveler import``, lakectl-style."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graveler.cli.output import Output, commit_doc
from graveler.cli.shared import key_value, progress_line, repo_of
from graveler.core import uri as uris
from graveler.core.errors import InvalidArgument, InvalidURI

if TYPE_CHECKING:
    from graveler.client import Graveler
    from graveler.core.hookevents import HookResult, HookRun
    from graveler.versioning.import_sources import ImportSource


def run_doc(run: HookRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "event_type": run.event.value,
        "status": run.status.value,
        "branch": run.branch,
        "tag": run.tag,
        "commit_id": run.commit_id,
        "source_ref": run.source_ref,
        "start_time": run.started.isoformat(timespec="microseconds"),
        "end_time": run.ended.isoformat(timespec="microseconds"),
        "hooks": [_hook_doc(h) for h in run.hooks],
    }


def _hook_doc(h: HookResult) -> dict[str, Any]:
    return {
        "hook_id": h.hook_id,
        "type": h.kind,
        "action": h.action,
        "status": h.status.value,
        "start_time": h.started.isoformat(timespec="microseconds"),
        "end_time": h.ended.isoformat(timespec="microseconds"),
        "error": h.error,
        "output": h.output,
    }


def runs_list(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = repo_of(gv, a.uri)
    runs = repo.hook_runs(branch=a.branch, commit_id=a.commit, after=a.after, amount=a.amount)
    if out.as_json:
        out.json([run_doc(r) for r in runs])
        return 0
    out.table(
        None,
        ["RUN ID", "EVENT", "BRANCH", "COMMIT", "STATUS", "START"],
        [
            (
                r.run_id,
                r.event.value,
                r.branch or r.tag or "",
                r.commit_id[:12],
                r.status.value,
                f"{r.started:%Y-%m-%d %H:%M:%S}",
            )
            for r in runs
        ],
    )
    return 0


def runs_describe(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, _ = repo_of(gv, a.uri)
    run = repo.hook_run(a.run_id)
    if out.as_json:
        out.json(run_doc(run))
        return 0
    doc = run_doc(run)
    out.mapping({k: v for k, v in doc.items() if k != "hooks" and v is not None})
    out.table(
        None,
        ["HOOK", "TYPE", "ACTION", "STATUS", "ERROR"],
        [(h.hook_id, h.kind, h.action or "", h.status.value, h.error or "") for h in run.hooks],
    )
    for h in run.hooks:
        if h.output is not None:
            from rich.markup import escape  # the output is the hook's text, not markup

            text = f"\noutput of {h.hook_id}:\n{h.output.rstrip()}"
            out.styled(escape(text), text)
    return 0


def validate(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    from graveler.versioning.hooks.actions import parse_action

    path = Path(a.path)
    if not path.is_file():
        raise InvalidArgument(f"{path} is not a file")
    action = parse_action(path.read_bytes(), str(path))
    doc = {
        "name": action.name,
        "on": {e.value: list(b) for e, b in action.on.items()},
        "hooks": [{"id": h.id, "type": h.type} for h in action.hooks],
    }
    out.json(doc) if out.as_json else out.message(f"Action {action.name!r} in {path} is valid")
    return 0


def import_command(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    from graveler.versioning.imports import ImportControl

    dest = uris.parse(a.dest)
    if dest.ref is None:
        raise InvalidURI(f"{a.dest!r} needs a branch: graveler://REPO/BRANCH[/PATH]")
    sources = _sources(a, dest.path or "")
    repo = gv.repository(dest.repository)
    meta = dict(key_value(kv) for kv in a.meta)
    with progress_line(out, "Importing") as shown:
        result = repo.import_data(
            dest.ref, sources, message=a.message, metadata=meta, control=ImportControl(shown)
        )
    if out.as_json:
        out.json(
            {
                "commit": commit_doc(result.commit),
                "objects": result.objects,
                "source": result.source,
                "destination": result.destination,
                "sources": list(result.sources),
            }
        )
        return 0
    where = f"{dest.ref}/{result.destination}" if len(sources) == 1 else dest.ref
    out.commit(result.commit, heading=f"Imported {result.objects} object(s) to {where}:")
    return 0


def _sources(a: argparse.Namespace, path: str) -> list[ImportSource]:
    """The sources of ``graveler import``: ``--from`` (to the path of ``--to``), then every
    ``--prefix`` and ``--object`` pair."""
    from graveler.versioning.import_sources import ImportSource

    sources = [ImportSource.prefix(uri, dest) for uri, dest in a.prefix]
    sources += [ImportSource.object(uri, dest) for uri, dest in a.object]
    if a.source is not None:
        sources.insert(0, ImportSource.prefix(a.source, path))
    elif path:
        raise InvalidArgument(f"the path of {a.dest!r} is for --from: give each source its own")
    if not sources:
        raise InvalidArgument("nothing to import: give --from, --prefix or --object")
    return sources
