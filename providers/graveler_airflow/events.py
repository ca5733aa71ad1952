"""Asset events for a merge that landed, emitted so that they can never fail the task.

Airflow records a task's asset events in the transaction that marks it successful. An event
for an asset Airflow has never seen makes it insert that asset (and its link to the alias)
right there, and two tasks doing so at once collide on a unique index: the task is failed
after its merge landed, with no retry, and its events are rolled back. So events go only
where no such insert can happen:

* to **declared outlets**: ``graveler://`` assets given as ``outlets`` of the merging task are
  created when the DAG is parsed. Airflow records an event for each of them whenever the task
  succeeds; the provider fills in its extra (``commit_id``, ``changes`` under its path, 0 when
  the merge did not touch it).
* through the task's **asset alias**, for the other assets the merge changed (tables by
  default, see :mod:`graveler_airflow.assets.graveler`) that Airflow already knows: an asset
  some DAG declares (in a ``schedule``, ``inlets`` or ``outlets``) exists before the merge.
  Assets nobody declares are skipped, with a log line naming them. Each merging task has an
  alias of its own (:func:`merge_alias`) and runs one instance at a time across DAG runs
  (``max_active_tis_per_dag=1``), so the first link of an asset to the alias is never
  inserted twice at once either.

Whatever goes wrong while computing or attaching events is logged as a warning and
swallowed: the merge has landed, and bookkeeping must not turn it into a failed task.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow.sdk import Asset, AssetAlias

from graveler_airflow.assets.graveler import (
    DEFAULT_LIMIT,
    asset_from_uri,
    asset_uri,
    count_under,
    merge_changes,
)

if TYPE_CHECKING:
    from airflow.sdk import BaseOperator, Context

    from graveler import MergeResult, Repository

log = logging.getLogger(__name__)


def merge_alias(dag_id: str, task_id: str) -> AssetAlias:
    """The asset alias through which the merging task ``task_id`` of ``dag_id`` emits the
    events of the assets it changed (one alias per task: see the module docstring)."""
    return AssetAlias(name=f"graveler-merges:{dag_id}.{task_id}")


@dataclass(frozen=True)
class EventOptions:
    """What a merging task emits: through ``alias`` (None: declared outlets only), for
    ``paths`` (None: the changed tables), at most ``limit`` assets."""

    alias: AssetAlias | None
    paths: Sequence[str] | None = None
    limit: int = DEFAULT_LIMIT


def emit_merge_events(
    context: Context,
    task: BaseOperator,
    repo: Repository,
    into: str,
    merged: MergeResult,
    options: EventOptions,
    extra: dict[str, Any] | None = None,
) -> int:
    """Attach the events of ``merged`` (a merge into ``into``) to the task's outlets; returns
    how many assets got one. Never raises: a failure is logged and 0 returned."""
    try:
        return _emit(context, task, repo, into, merged, options, extra or {})
    except Exception:
        log.warning(
            "The merge into %s landed as %s, but its asset events could not be emitted",
            into,
            merged.commit.id,
            exc_info=True,
        )
        return 0


def _emit(
    context: Context,
    task: BaseOperator,
    repo: Repository,
    into: str,
    merged: MergeResult,
    options: EventOptions,
    extra: dict[str, Any],
) -> int:
    before, after = merged.before.id, merged.commit.id
    outlet_events = context["outlet_events"]
    declared = declared_assets(task, repo.name, into)
    base = {"repository": repo.name, "branch": into, "commit_id": after}
    base |= {"previous_commit_id": before, **extra}
    changed = [d.path for d in repo.diff(before, after)] if declared else None
    for path, asset in declared.items():
        counted = count_under(changed or [], path)
        outlet_events[asset].extra = {**base, "path": path, "changes": counted}
    if options.alias is None:
        return len(declared)
    emitted = 0
    changes = merge_changes(
        repo,
        into,
        before,
        after,
        paths=options.paths,
        limit=options.limit,
        extra=extra,
        changed=changed,
    )
    for change in changes:
        if change.path in declared:
            continue
        known = known_asset(context, change.uri)
        if known is None:
            log.info("No DAG declares %s: no asset event for it", change.uri)
            continue
        outlet_events[options.alias].add(known, extra=change.extra)
        emitted += 1
    return len(declared) + emitted


def declared_assets(task: BaseOperator, repository: str, branch: str) -> dict[str, Asset]:
    """The task's ``graveler://`` outlets on ``branch`` of ``repository``, by path."""
    root = asset_uri(repository, branch)
    found: dict[str, Asset] = {}
    for outlet in task.outlets or []:
        if isinstance(outlet, Asset) and (outlet.uri == root or outlet.uri.startswith(root + "/")):
            found[outlet.uri[len(root) + 1 :]] = outlet
    return found


def known_asset(context: Context, uri: str) -> Asset | None:
    """The asset Airflow records under ``uri`` (with the name it was declared with), or None
    when Airflow has never seen it."""
    from airflow.sdk.exceptions import AirflowRuntimeError

    try:
        key = context["outlet_events"].for_asset(uri=uri).key  # type: ignore[attr-defined]
    except AirflowRuntimeError:
        return None
    return Asset(name=key.name, uri=key.uri) if key.uri == uri else asset_from_uri(uri)
