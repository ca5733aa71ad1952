"""Run branches: the Dagster side of graveler's run lifecycle (:mod:`graveler.runs`).

The engine owns the lifecycle (open, commit, publish exactly once, discard, retire); this
module only names things after Dagster:

* the run: identity ``dagster/<run id>``, branch ``<branch_prefix><run id>``, published into
  the resource's target branch (:func:`run_of`);
* lineage: a re-execution's branch starts from the kept branch of the failed run it continues
  (:func:`ensure_run_branch`), and once it is published those branches are retired;
* metadata: lakeFS-style commit metadata naming the Dagster run, job and UI page, and run tags
  (``graveler/branch``, ``graveler/merge``, ``graveler/merge_commit``) that say where the run
  stands. A run sets its own tags when it opens its branch, so a re-execution never shows the
  tags it inherited from its parent (:func:`claim_tags`).

:func:`publish_run` is what both the merge sensor and a downstream step that needs an
upstream run's data call; it is idempotent, so whichever comes first merges and the other
finds the merge. :func:`publish_or_fail` turns a refused publication into a Dagster
``Failure`` that is not retried.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from dagster import (
    AssetExecutionContext,
    DagsterInstance,
    DagsterRun,
    Failure,
    MetadataValue,
    OpExecutionContext,
)

from graveler import Commit, ObjectEntry, Publication, Repository, Run, runs
from graveler.errors import (
    DirtyBranch,
    MergeConflict,
    NotFastForward,
    NotFound,
    ProtectedBranch,
)
from graveler_dagster import formats, lineage
from graveler_dagster.resource import GravelerResource

#: Object metadata key naming the Dagster run that wrote an object.
RUN_ID_KEY = formats.RUN_ID_KEY  # one definition, shared with the trust check
#: Commit metadata keys, following lakeFS's ``::lakefs::<system>::`` convention.
META_PREFIX = "::lakefs::Dagster::"
#: Prefix of a Dagster run's identity in graveler (:data:`graveler.runs.RUN_KEY`).
IDENTITY_PREFIX = "dagster/"
TAG_BRANCH = "graveler/branch"
TAG_MERGE = lineage.TAG_MERGE  # one definition: lineage reads it to tell settled runs
TAG_MERGE_COMMIT = "graveler/merge_commit"
#: A run tag choosing the merge strategy its publication uses, over the sensor's ("none":
#: conflicts refuse it, as Iceberg jobs that must not overwrite each other want).
TAG_STRATEGY = "graveler/merge_strategy"
MAX_LINEAGE = 100
#: Why a publication is refused for good (retrying would refuse again): the branch is kept.
REFUSED = (MergeConflict, DirtyBranch, ProtectedBranch, NotFastForward)
_CLAIMED: set[str] = set()  # runs whose tags this process has already set


def run_of(gv: GravelerResource, repo: Repository, run_id: str) -> Run:
    """The graveler run of Dagster run ``run_id``."""
    return Run(f"{IDENTITY_PREFIX}{run_id}", gv.run_branch_name(run_id), gv.target(repo))


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
    """Open the run's branch (create it unless it exists) and return its name. It is cut from
    the kept branch of the nearest ancestor in ``lineage`` (from :func:`run_lineage`) when
    there is one, so a re-execution finds the outputs its parent did produce; else from the
    target."""
    ancestors = [gv.run_branch_name(r) for r in lineage if r != run_id]
    source = next((b for b in ancestors if repo.branch_exists(b)), None)
    run = run_of(gv, repo, run_id)
    runs.open_run(repo, run, source=source)
    return run.branch


def claim_tags(instance: DagsterInstance | None, run: DagsterRun, branch: str) -> None:
    """Tag ``run`` with its own branch and ``graveler/merge: pending`` (once per process).
    A re-execution inherits its parent's tags (``kept``, the parent's branch); this replaces
    them as soon as the run writes."""
    if instance is None or run.run_id in _CLAIMED:
        return
    tags = {TAG_BRANCH: branch, TAG_MERGE: "pending"}
    if TAG_MERGE_COMMIT in run.tags:  # inherited: this run has merged nothing yet
        tags[TAG_MERGE_COMMIT] = ""
    if any(run.tags.get(k) != v for k, v in tags.items()):
        instance.add_run_tags(run.run_id, tags)
    _CLAIMED.add(run.run_id)


def open_run_branch(
    gv: GravelerResource, context: AssetExecutionContext | OpExecutionContext
) -> tuple[Repository, str]:
    """For assets that write to graveler themselves: the repository and the run's branch
    (created if needed). Stage objects with ``metadata={RUN_ID_KEY: context.run_id}`` so that
    downstream reads find them (:func:`read_ref`), then :func:`commit_staged`."""
    repo = gv.get_repository()
    ids = run_lineage(context.instance, context.run)
    branch = ensure_run_branch(gv, repo, context.run.run_id, ids)
    claim_tags(context.instance, context.run, branch)
    return repo, branch


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
    """Commit what is staged on run branch ``branch``; when a concurrent commit already took
    our changes (or nothing was staged), return the branch head, which then holds them."""
    run_id = (metadata or {}).get(RUN_ID_KEY, branch)
    run = Run(f"{IDENTITY_PREFIX}{run_id}", branch, branch)
    made = runs.commit_pending(repo, run, message, metadata=metadata, committer="dagster")
    return made if made is not None else repo.resolve(branch).commit


def publish_run(
    gv: GravelerResource,
    repo: Repository,
    instance: DagsterInstance,
    dagster_run: DagsterRun,
    strategy: str | None = "source-wins",
    table_strategy: str | None = None,
) -> Publication:
    """Publish ``dagster_run`` into the target exactly once (:func:`graveler.runs.publish`),
    then retire the kept branches of the runs it re-executes, tag the run ``graveler/merge:
    merged`` with ``graveler/merge_commit``, and bring Dagster's latest materialization of
    every asset the run (or a run it re-executes) materialized into agreement with the
    target (:func:`graveler_dagster.lineage.restate`): what its parents materialized is
    restated as published by this run, and an asset whose latest materialization names a
    version the target does not hold (the merges of runs that wrote it landed in another
    order than Dagster stored their materializations, or the strategy kept the target's
    side) is restated as the target's. A replayed publication does the same again. The
    run's :data:`TAG_STRATEGY` tag overrides ``strategy``. A refused merge (a conflict of
    files with no strategy or of a table with no ``table_strategy``, a target with
    uncommitted changes, or one that moved when the resource publishes by fast-forward only)
    keeps the branch, tags the run ``graveler/merge: failed``, restates the assets it
    materialized as the versions the target holds (so Dagster never names data that was not
    published) and raises the error (one of :data:`REFUSED`); anything else (a database
    outage, a branch that kept moving) propagates untagged.

    ``strategy`` settles files both sides changed; a table (Delta Lake, Iceberg) both sides
    changed is merged by its format's rules, and ``table_strategy`` settles it when those
    refuse (default None: the TableConflict fails the publication, as the format fails the
    later of two conflicting transactions, instead of dropping the other run's table
    versions)."""
    run = run_of(gv, repo, dagster_run.run_id)
    message = f"Merge Dagster run {dagster_run.run_id} ({dagster_run.job_name})"
    options = gv.merge_options()
    try:
        pub = runs.publish(
            repo,
            run,
            message,
            metadata=commit_metadata(gv, dagster_run),
            committer="dagster",
            strategy=run_strategy(dagster_run, strategy),
            table_strategy=table_strategy,
            since=datetime.fromtimestamp(_created(instance, dagster_run), UTC),
            fast_forward=options.fast_forward,
            ff_only=options.ff_only,
            squash=options.squash,
            allow_empty=options.allow_empty,
        )
    except REFUSED:
        instance.add_run_tags(dagster_run.run_id, {TAG_MERGE: "failed", TAG_BRANCH: run.branch})
        target, ids = gv.target(repo), [dagster_run.run_id]
        lineage.restate(instance, repo, target, ids, ui_base=gv.graveler_ui_url)
        raise
    if pub.merge is not None:
        _after_publication(gv, repo, instance, dagster_run, pub.merge.commit)
    return pub


def run_strategy(dagster_run: DagsterRun, default: str | None) -> str | None:
    """The merge strategy a run asks for with its :data:`TAG_STRATEGY` tag ("none" for
    no strategy: a conflict refuses the publication), else ``default``."""
    asked = dagster_run.tags.get(TAG_STRATEGY)
    if asked is None:
        return default
    return None if asked.strip().lower() in ("", "none") else asked


def _after_publication(
    gv: GravelerResource,
    repo: Repository,
    instance: DagsterInstance,
    dagster_run: DagsterRun,
    merged: Commit,
) -> None:
    """Retire the parents' kept branches, tag the run merged, then restate (see
    :func:`publish_run`). The tag comes first: a concurrent publication that finds this
    run's materialization latest leaves it alone until then, and this run's own check, made
    after the tag, sees that publication's merge."""
    ids = run_lineage(instance, dagster_run)
    for ancestor in ids[1:]:
        runs.retire(repo, run_of(gv, repo, ancestor), merged)
    instance.add_run_tags(
        dagster_run.run_id,
        {
            TAG_MERGE: "merged",
            TAG_MERGE_COMMIT: merged.id,
            TAG_BRANCH: gv.run_branch_name(dagster_run.run_id),
        },
    )
    lineage.restate(
        instance,
        repo,
        gv.target(repo),
        ids,
        published_by=dagster_run.run_id,
        ui_base=gv.graveler_ui_url,
    )


def _created(instance: DagsterInstance, dagster_run: DagsterRun) -> float:
    record = instance.get_run_record_by_id(dagster_run.run_id)
    if record is not None and record.create_timestamp is not None:
        return record.create_timestamp.timestamp()
    return datetime.now(UTC).timestamp()


def publish_or_fail(
    gv: GravelerResource,
    repo: Repository,
    instance: DagsterInstance,
    dagster_run: DagsterRun,
    strategy: str | None = "source-wins",
    table_strategy: str | None = None,
) -> Publication:
    """:func:`publish_run` from inside a step: a refused publication raises a Dagster
    ``Failure`` with ``allow_retries=False`` (retrying would refuse again), whose message says
    that nothing was published and the run's writes are kept on its branch."""
    try:
        return publish_run(gv, repo, instance, dagster_run, strategy, table_strategy)
    except REFUSED as exc:
        branch = gv.run_branch_name(dagster_run.run_id)
        raise Failure(
            description=(
                f"graveler: run {dagster_run.run_id} was not published into "
                f"{gv.target(repo)!r}: {exc}. Nothing was merged; its writes are kept on "
                f"branch {branch!r}."
            ),
            metadata={"graveler/branch": MetadataValue.text(branch)},
            allow_retries=False,
        ) from exc


def discard_run_branch(gv: GravelerResource, repo: Repository, run_id: str) -> bool:
    """Delete the run's branch; False when there was none."""
    return runs.discard(repo, run_of(gv, repo, run_id))


def commit_metadata(gv: GravelerResource, run: DagsterRun) -> dict[str, str]:
    """lakeFS-style commit metadata naming the run, its job and its page in the Dagster UI."""
    return {
        f"{META_PREFIX}run_id": run.run_id,
        f"{META_PREFIX}job_name": run.job_name,
        f"{META_PREFIX}url[url:ui]": gv.run_url(run.run_id),
    }
