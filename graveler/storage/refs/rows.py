"""Conversions between model dataclasses and rows of :mod:`graveler.storage.refs.schema`, for both
SQL stores (a row is anything with the columns as attributes: a SQLAlchemy ``Row``, or the
embedded store's records, whose times are already converted).

JSON columns are written canonically (compact separators, sorted keys) so equal values always
produce equal text. Imports no SQLAlchemy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from graveler.core.errors import CorruptFile
from graveler.core.hookevents import HookEvent, HookResult, HookRun, HookStatus
from graveler.core.model import Branch, Commit, RangeSettings, Repository, StagedEntry, Tag
from graveler.core.protection import (
    BlockedAction,
    ProtectionRule,
    decode_actions,
    encode_actions,
)
from graveler.core.protection import check as check_rules

#: Commits per page of ``iter_commits`` (each page its own short read).
ITER_BATCH = 1_000
#: A database row: its columns as attributes.
Row = Any


def dump_json(value: Any) -> str:
    """Canonical JSON text of ``value``."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def load_json_object(text: str) -> dict[str, Any]:
    """A JSON object column read back; CorruptFile when it is not one."""
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise CorruptFile(f"a stored JSON document is not an object: {text[:60]!r}")
    return doc


def repository_row(repo: Repository) -> dict[str, Any]:
    settings = repo.range_settings
    return {
        "name": repo.name,
        "storage_namespace": repo.storage_namespace,
        "default_branch": repo.default_branch,
        "creation_date": repo.creation_date,
        "range_min_size": settings.min_size,
        "range_max_size": settings.max_size,
        "range_raggedness": settings.raggedness,
    }


def to_repository(row: Row) -> Repository:
    return Repository(
        name=row.name,
        storage_namespace=row.storage_namespace,
        default_branch=row.default_branch,
        creation_date=row.creation_date,
        range_settings=RangeSettings(
            min_size=row.range_min_size,
            max_size=row.range_max_size,
            raggedness=row.range_raggedness,
        ),
    )


def branch_values(branch: Branch) -> dict[str, Any]:
    """The mutable columns of a branch row (everything but repo, name and version)."""
    return {
        "commit_id": branch.commit_id,
        "staging_token": branch.staging_token,
        "sealed_tokens": dump_json(list(branch.sealed_tokens)),
        "protected": branch.protected,
        "hidden": branch.hidden,
    }


def to_branch(row: Row) -> Branch:
    return Branch(
        name=row.name,
        commit_id=row.commit_id,
        staging_token=row.staging_token,
        sealed_tokens=tuple(json.loads(row.sealed_tokens)),
        protected=bool(row.protected),
        hidden=bool(row.hidden),
    )


def to_tag(row: Row) -> Tag:
    return Tag(name=row.name, commit_id=row.commit_id)


def commit_row(repo: str, commit: Commit) -> dict[str, Any]:
    return {
        "repo": repo,
        "id": commit.id,
        "parents": dump_json(list(commit.parents)),
        "metarange_id": commit.metarange_id,
        "message": commit.message,
        "committer": commit.committer,
        "creation_date": commit.creation_date,
        "metadata": dump_json(dict(commit.metadata)),
        "generation": commit.generation,
    }


def to_commit(row: Row) -> Commit:
    metadata: Mapping[str, str] = json.loads(row.metadata)
    return Commit(
        id=row.id,
        parents=tuple(json.loads(row.parents)),
        metarange_id=row.metarange_id,
        message=row.message,
        committer=row.committer,
        creation_date=row.creation_date,
        metadata=metadata,
        generation=row.generation,
    )


def to_staged(row: Row) -> StagedEntry:
    identity = row.identity
    value = row.value
    return StagedEntry(
        key=bytes(row.key),
        identity=None if identity is None else bytes(identity),
        value=None if value is None else bytes(value),
    )


def hook_run_row(run: HookRun) -> dict[str, Any]:
    """The ``graveler_hook_runs`` row of ``run`` (its hooks as a JSON array)."""
    return {
        "repo": run.repository,
        "run_id": run.run_id,
        "event": run.event.value,
        "status": run.status.value,
        "branch": run.branch,
        "tag": run.tag,
        "commit_id": run.commit_id,
        "source_ref": run.source_ref,
        "started": run.started,
        "ended": run.ended,
        "hooks": dump_json([_result_doc(r) for r in run.hooks]),
    }


def _result_doc(r: HookResult) -> dict[str, Any]:
    return {
        "hook_id": r.hook_id,
        "kind": r.kind,
        "status": r.status.value,
        "started": r.started.isoformat(),
        "ended": r.ended.isoformat(),
        "action": r.action,
        "error": r.error,
        "output": r.output,
    }


def to_hook_run(row: Row) -> HookRun:
    return HookRun(
        run_id=row.run_id,
        repository=row.repo,
        event=HookEvent(row.event),
        status=HookStatus(row.status),
        started=row.started,
        ended=row.ended,
        commit_id=row.commit_id,
        branch=row.branch,
        tag=row.tag,
        source_ref=row.source_ref,
        hooks=tuple(
            HookResult(
                d["hook_id"],
                d["kind"],
                HookStatus(d["status"]),
                datetime.fromisoformat(d["started"]),
                datetime.fromisoformat(d["ended"]),
                d["action"],
                d["error"],
                d.get("output"),  # runs recorded before hooks' output was kept have none
            )
            for d in json.loads(row.hooks)
        ),
    )


def protection_row(repo: str, rule: ProtectionRule) -> dict[str, Any]:
    """The ``graveler_branch_protection`` row of ``rule``."""
    return {"repo": repo, "pattern": rule.pattern, "blocked": encode_actions(rule.blocked)}


def to_protection_rule(pattern: str, blocked: str) -> ProtectionRule:
    return ProtectionRule(pattern, decode_actions(blocked))


def check_staging_write(found: Any, branch: str) -> None:
    """Raise ProtectionRuleBlocked when one of the (pattern, blocked) rows ``found`` blocks
    writes to the staging area of ``branch`` (the check every ``stage`` makes inside its
    transaction)."""
    rules = [to_protection_rule(str(p), str(b)) for p, b in found]
    check_rules(rules, branch, BlockedAction.STAGING_WRITE)
