"""Run branches: one graveler branch per Dagster run, merged into the target when it succeeds.

Life of a run branch ``<branch_prefix><run id>``:

* **created** idempotently on first use (:func:`ensure_run_branch`), from the target branch --
  or, when the run re-executes a failed run whose branch was kept, from that branch, so the
  outputs the failed run did produce are there;
* **written** by the IO manager (one commit per output) and by assets that stage files
  themselves (:func:`commit_staged`);
* **merged** into the target by the run-status sensor when the run succeeds
  (:func:`merge_run_branch`): leftover staged changes are committed, the merge is a real merge
  commit (never a fast-forward) carrying the run id, the job name and a link, then the branch
  is deleted;
* **kept** for inspection when the run fails (or deleted, by option: :func:`discard_run_branch`).

Objects written by a run carry the user metadata ``dagster/run_id``; :func:`read_ref` uses it to
decide whether an input comes from the run branch (written in this run or in the run it
re-executes) or from the target branch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dagster import AssetExecutionContext, DagsterInstance, DagsterRun, OpExecutionContext

from graveler import Commit, ObjectEntry, Repository
from graveler.errors import AlreadyExists, BranchNotFound, NoChanges, NotFound
from graveler_dagster.resource import GravelerResource

#: Object metadata key naming the Dagster run that wrote an object.
RUN_ID_KEY = "dagster/run_id"
#: Commit metadata keys, following lakeFS's ``::lakefs::<system>::`` convention.
META_PREFIX = "::lakefs::Dagster::"
MAX_LINEAGE = 100


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    """What :func:`merge_run_branch` did: ``commit`` is the target's new head (None when the
    run branch held nothing new or did not exist)."""

    branch: str
    commit: Commit | None
    existed: bool


def run_lineage(instance: DagsterInstance | None, run: DagsterRun) -> tuple[str, ...]:
    """``run``'s id, then the ids of the runs it re-executes (parent, grandparent...)."""
    ids = [run.run_id]
    parent = run.parent_run_id
    while parent and parent not in ids and len(ids) < MAX_LINEAGE:
        ids.append(parent)
        found = instance.get_run_by_id(parent) if instance is not None else None
        parent = found.parent_run_id if found is not None else None
    return tuple(ids)


def ensure_run_branch(
    gv: GravelerResource, repo: Repository, run_id: str, lineage: Sequence[str] = ()
) -> str:
    """Create the run's branch unless it exists; returns its name. ``lineage`` (from
    :func:`run_lineage`) names ancestor runs whose kept branch is a better source than the
    target."""
    name = gv.run_branch_name(run_id)
    try:
        repo.branch(name)
        return name
    except BranchNotFound:
        pass
    source = _first_existing(repo, [gv.run_branch_name(r) for r in lineage if r != run_id])
    with contextlib.suppress(AlreadyExists):  # another step of the same run won the race
        repo.create_branch(name, source or gv.target(repo))
    return name


def open_run_branch(
    gv: GravelerResource, context: AssetExecutionContext | OpExecutionContext
) -> tuple[Repository, str]:
    """For assets that write to graveler themselves: the repository and the run's branch
    (created if needed). Stage objects with ``metadata={RUN_ID_KEY: context.run_id}`` so that
    downstream reads find them (:func:`read_ref`), then :func:`commit_staged`."""
    repo = gv.get_repository()
    lineage = run_lineage(context.instance, context.run)
    return repo, ensure_run_branch(gv, repo, context.run.run_id, lineage)


def _first_existing(repo: Repository, branches: Sequence[str]) -> str | None:
    for name in branches:
        try:
            repo.branch(name)
            return name
        except BranchNotFound:
            continue
    return None


def read_ref(gv: GravelerResource, repo: Repository, path: str, lineage: Sequence[str]) -> str:
    """Where to read ``path`` from: the run branch if an object there was written by a run of
    ``lineage``, else the target branch."""
    return read_source(gv, repo, path, lineage)[0]


def read_source(
    gv: GravelerResource, repo: Repository, path: str, lineage: Sequence[str]
) -> tuple[str, ObjectEntry | None]:
    """:func:`read_ref` and, when that is the run branch, the entry already looked up there
    (None for the target branch, which the caller still has to look up)."""
    branch = gv.run_branch_name(lineage[0])
    try:
        entry = repo.stat(branch, path)
    except NotFound:
        return gv.target(repo), None
    if entry.metadata.get(RUN_ID_KEY) in lineage:
        return branch, entry
    return gv.target(repo), None


def read_ref_for_prefix(
    gv: GravelerResource, repo: Repository, prefix: str, lineage: Sequence[str]
) -> str:
    """Like :func:`read_ref` for a directory of objects written together (a Spark output):
    decided by the first object under ``prefix`` on the run branch."""
    branch = gv.run_branch_name(lineage[0])
    try:
        first = next(iter(repo.iter_objects(branch, prefix)), None)
    except NotFound:
        return gv.target(repo)
    if first is not None and first.metadata.get(RUN_ID_KEY) in lineage:
        return branch
    return gv.target(repo)


def commit_staged(
    repo: Repository, branch: str, message: str, metadata: Mapping[str, str] | None = None
) -> Commit:
    """Commit what is staged on ``branch``; when a concurrent commit already took our changes
    (or nothing was staged), return the branch head, which then holds them."""
    try:
        return repo.commit(branch, message, metadata=metadata, committer="dagster")
    except NoChanges:
        return repo.resolve(branch).commit


def merge_run_branch(
    gv: GravelerResource,
    repo: Repository,
    run: DagsterRun,
    strategy: str | None = "source-wins",
) -> MergeOutcome:
    """Merge the run's branch into the target and delete it (see the module docstring).

    Idempotent: a second call finds no branch and does nothing. A merge conflict (possible only
    with ``strategy=None``) propagates and keeps the branch: its data is the user's."""
    branch = gv.run_branch_name(run.run_id)
    try:
        repo.branch(branch)
    except BranchNotFound:
        return MergeOutcome(branch, None, existed=False)
    meta = commit_metadata(gv, run)
    commit_staged(repo, branch, f"Dagster run {run.run_id}: staged changes", meta)
    message = f"Merge Dagster run {run.run_id} ({run.job_name})"
    try:
        merged: Commit | None = repo.merge(
            branch,
            gv.target(repo),
            strategy=strategy,
            message=message,
            metadata=meta,
            committer="dagster",
            fast_forward=False,
        ).commit
    except NoChanges:  # nothing new, or merged by an earlier evaluation
        merged = None
    repo.delete_branch(branch)
    return MergeOutcome(branch, merged, existed=True)


def discard_run_branch(gv: GravelerResource, repo: Repository, run_id: str) -> bool:
    """Delete the run's branch; False when there was none."""
    try:
        repo.delete_branch(gv.run_branch_name(run_id))
    except BranchNotFound:
        return False
    return True


def commit_metadata(gv: GravelerResource, run: DagsterRun) -> dict[str, str]:
    """lakeFS-style commit metadata naming the run, its job and its page in the Dagster UI."""
    return {
        f"{META_PREFIX}run_id": run.run_id,
        f"{META_PREFIX}job_name": run.job_name,
        f"{META_PREFIX}url[url:ui]": gv.run_url(run.run_id),
    }
