"""History commands, lakectl-style: ``log``, ``cherry-pick``, ``revert`` (also ``branch
revert``) and ``branch reset --hard``."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import TYPE_CHECKING, Any

from graveler.cli.output import Output, commit_doc
from graveler.cli.shared import key_value, ref_uri, same_repo, status
from graveler.core import uri as uris
from graveler.core.errors import InvalidArgument
from graveler.views.resolve import resolve_commit

if TYPE_CHECKING:
    from graveler.client import Graveler
    from graveler.repository import Repository


def log(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, _ = ref_uri(gv, a.uri)
    commits = list(
        repo.log(
            ref,
            a.amount,
            first_parent=a.first_parent,
            no_merges=a.no_merges,
            objects=_split(a.objects, "--objects"),
            prefixes=_split(a.prefixes, "--prefixes"),
            since=_time(a.since, "--since"),
            until=_time(a.until, "--until"),
            stop_at=_ref(repo, a.stop_at) if a.stop_at else None,
        )
    )
    if out.as_json:
        out.json([commit_doc(c) for c in commits])
        return 0
    for c in commits:
        out.commit(c)
        if a.show_meta_range_id:
            out.message(f"    Meta Range ID: {c.metarange_id}\n")
    return 0


def cherry_pick(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, ref, _ = ref_uri(gv, a.ref)
    branch = same_repo(repo, a.branch)
    with status(out, f"Cherry-picking {ref} onto {branch} ..."):
        c = repo.cherry_pick(branch, ref, **_overrides(a))
    out.commit(c, heading=f"Cherry-picked {ref} onto {branch}:")
    return 0


def revert(gv: Graveler, a: argparse.Namespace, out: Output) -> int:
    repo, branch, _ = ref_uri(gv, a.branch)
    targets = [resolve_commit(repo, _ref(repo, r)).id for r in a.refs]  # all before the first
    commits = [repo.revert(branch, target, **_overrides(a)) for target in targets]
    if out.as_json:
        out.json(commit_doc(commits[-1]) if len(commits) == 1 else [commit_doc(c) for c in commits])
        return 0
    for c in commits:
        out.commit(c, heading=f"Reverted on {branch}:")
    return 0


def reset_hard(repo: Repository, branch: str, target: str, out: Output) -> int:
    """``branch reset --hard REF``."""
    c = repo.reset_hard(branch, _ref(repo, target))
    out.commit(c, heading=f"Branch {branch} reset to {c.id[:12]}; uncommitted changes dropped:")
    return 0


def _overrides(a: argparse.Namespace) -> dict[str, Any]:
    meta = None if a.meta is None else dict(key_value(kv) for kv in a.meta)
    return {
        "parent_number": a.parent_number,
        "message": a.message,
        "metadata": meta,
        "allow_empty": a.allow_empty,
    }


def _ref(repo: Repository, text: str) -> str:
    """A bare ref expression, or the ref of a graveler:// URI of the same repository."""
    if text.startswith(uris.SCHEMES):
        return same_repo(repo, text)
    return text


def _split(values: list[str], flag: str) -> list[str]:
    items = [v for value in values for v in value.split(",")]
    if any(not v for v in items):
        raise InvalidArgument(f"{flag} contains an empty path")
    return items


def _time(text: str | None, flag: str) -> datetime | None:
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgument(f"{flag} expects an RFC 3339 time, got {text!r}") from None
    if when.tzinfo is None:
        raise InvalidArgument(f"{flag} needs a time zone (e.g. 2026-01-02T03:04:05Z)")
    return when
