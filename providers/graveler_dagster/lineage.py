"""What Dagster's asset lineage says about graveler, and keeping it in agreement with the target.

Every materialization the IO manager records carries ``graveler/uri``: a commit-addressed URI
(``graveler://<repo>/<commit id>/<path>``) naming exactly the version written. Three things
can make Dagster's *latest* materialization of an asset disagree with the target branch:

* the run that materialized it failed later, so it was never published: the target still
  holds the previous version (or none);
* a re-execution published outputs its failed parent had produced: Dagster's latest record
  for them is the parent's (or a restatement of the target made when the parent failed);
* two runs materialized the asset and their merges landed in another order than Dagster
  stored their materializations (or the merge strategy kept the other run's version): the
  latest materialization names a version the target no longer holds.

:func:`restate` settles all three by reporting a run-less materialization of the version the
target holds, marked ``graveler/restates_run``. It never hides a materialization whose run
may still publish it (a run still going, or succeeded and waiting for the merge sensor):
that publication checks again when it lands.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from dagster import (
    AssetKey,
    AssetMaterialization,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    DagsterRunStatus,
    EventLogEntry,
    MetadataValue,
)

from graveler import Commit, GravelerURI, ObjectEntry, Repository
from graveler.errors import InvalidArgument, NotFound
from graveler.server.ui.links import Links

URI_KEY = "graveler/uri"
COMMIT_KEY = "graveler/commit"
#: Metadata of a restatement: the run whose materialization it replaces.
RESTATES_KEY = "graveler/restates_run"
#: Metadata of a restatement made when a run was published: that run.
PUBLISHED_BY_KEY = "graveler/published_by_run"
#: The version's page in graveler's web UI, when the resource names one (``graveler_ui_url``).
UI_KEY = "graveler/ui"
#: The Iceberg snapshot a table's materialization names (:mod:`graveler_dagster.iceberg`).
SNAPSHOT_KEY = "iceberg/snapshot_id"
#: The run tag saying where a run's publication stands (``graveler_dagster.runs.TAG_MERGE``).
TAG_MERGE = "graveler/merge"
#: :data:`TAG_MERGE` values of a publication that is over: merged, or refused for good.
PUBLICATION_OVER = ("merged", "failed")
#: How many times :func:`restate` checks again while the target keeps moving under it.
MAX_PASSES = 20
_NOT_PUBLISHED = (DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED)


def ui_metadata(
    ui_base: str | None, repository: str, commit_id: str, path: str, *, prefix: bool = False
) -> dict[str, MetadataValue]:
    """``{UI_KEY: url}`` linking to ``path`` at ``commit_id`` in the graveler UI at
    ``ui_base`` (its object page; its object browser under ``path/`` when ``prefix``), or
    ``{}`` when ``ui_base`` is unset. The commit ID, never a branch, so the link keeps
    showing this version after the run branch is merged and deleted."""
    if not ui_base:
        return {}
    links = Links(ui_base)
    url = (
        links.tree(repository, commit_id, f"{path}/")
        if prefix
        else links.object(repository, commit_id, path)
    )
    return {UI_KEY: MetadataValue.url(url)}


@dataclass(frozen=True, slots=True)
class Recorded:
    """Where a materialization says its value is: ``run_id`` ("" for a run-less report)
    wrote ``path`` in ``repository``, readable at ``commit``. ``restates`` is the run a
    restatement replaced ("" otherwise); ``snapshot`` the Iceberg snapshot it names, if any."""

    run_id: str
    repository: str
    commit: str
    path: str
    restatement: bool
    restates: str = ""
    snapshot: str | None = None


def latest(instance: DagsterInstance, key: AssetKey, partition: str | None) -> EventLogEntry | None:
    """Dagster's latest materialization of ``key`` (or of one partition of it)."""
    if partition is None:
        return instance.get_latest_materialization_event(key)
    found = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=key, asset_partitions=[partition]), limit=1
    )
    return found.records[0].event_log_entry if found.records else None


def recorded(entry: EventLogEntry | None, partition: str | None) -> Recorded | None:
    """The graveler version a materialization names, or None when it names none (another IO
    manager wrote it, or it predates commit-addressed URIs)."""
    mat = entry.asset_materialization if entry is not None else None
    if entry is None or mat is None or URI_KEY not in mat.metadata:
        return None
    try:
        uri = GravelerURI.parse(str(mat.metadata[URI_KEY].value))
    except InvalidArgument:
        return None
    commit = mat.metadata.get(COMMIT_KEY)
    if commit is None or uri.ref != commit.value or not uri.path:
        return None
    path = uri.path
    if partition is not None and path.rsplit("/", 1)[-1] != partition:
        path = f"{path}/{partition}"  # one URI for a run that wrote several partitions
    restates, snapshot = mat.metadata.get(RESTATES_KEY), mat.metadata.get(SNAPSHOT_KEY)
    return Recorded(
        entry.run_id,
        uri.repository,
        str(commit.value),
        path,
        restates is not None,
        str(restates.value) if restates is not None else "",
        str(snapshot.value) if snapshot is not None else None,
    )


def materializations_of(
    instance: DagsterInstance, run_ids: Sequence[str]
) -> Iterator[tuple[AssetKey, str | None, Recorded]]:
    """(asset key, partition, recorded version) of each materialization the runs made."""
    for run_id in run_ids:
        records = instance.get_records_for_run(
            run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION
        ).records
        for record in records:
            mat = record.event_log_entry.asset_materialization
            found = recorded(record.event_log_entry, mat.partition if mat else None)
            if mat is not None and found is not None:
                yield mat.asset_key, mat.partition, found


Item = tuple[AssetKey, str | None, Recorded]


def restate(
    instance: DagsterInstance,
    repo: Repository,
    target: str,
    run_ids: Sequence[str],
    *,
    published_by: str | None = None,
    ui_base: str | None = None,
) -> int:
    """Bring Dagster's latest materialization of each asset (partition) that the runs
    ``run_ids`` materialized in ``repo`` into agreement with branch ``target``, by reporting
    the version the target's head holds there (nothing where it holds none). Returns how many
    run-less materializations were reported; with ``ui_base`` (the resource's
    ``graveler_ui_url``) each links into the UI. A latest materialization is replaced when:

    * it is one of ``run_ids`` other than ``published_by``: a run that failed or whose
      publication was refused, or the failed runs re-execution ``published_by`` continued;
    * it names a version the target does not hold (other content; for an Iceberg table, a
      snapshot the target's table does not list), and it is settled: ``published_by``'s, a
      restatement, or a run that failed or whose publication is over (:data:`TAG_MERGE`
      ``merged`` or ``failed``, which its publisher sets before calling this).

    Any other materialization is left alone: its run is still going, or succeeded and waits
    for its publication, which calls this when it lands. The head is read before the latest
    materializations; when it has moved once this pass's reports are stored (another
    publication landed meanwhile and may have checked before them), everything is checked
    again, up to :data:`MAX_PASSES` times. Whatever order concurrent publications land and
    call this in, the latest materialization ends up naming what the target holds."""
    items = _items(instance, repo, run_ids)
    total = 0
    for _ in range(MAX_PASSES):
        head = repo.resolve(target).commit
        made = _pass(instance, repo, target, head, items, run_ids, published_by, ui_base)
        total += made
        if not made or repo.resolve(target).commit.id == head.id:
            break
    return total


def _items(instance: DagsterInstance, repo: Repository, run_ids: Sequence[str]) -> list[Item]:
    """One materialization per asset (partition) the runs made in ``repo``, the first found."""
    found: dict[tuple[AssetKey, str | None], Item] = {}
    for key, partition, rec in materializations_of(instance, run_ids):
        if rec.repository == repo.name:
            found.setdefault((key, partition), (key, partition, rec))
    return list(found.values())


def _pass(
    instance: DagsterInstance,
    repo: Repository,
    target: str,
    head: Commit,
    items: Sequence[Item],
    run_ids: Sequence[str],
    published_by: str | None,
    ui_base: str | None,
) -> int:
    """One look at every item against ``head``; returns how many reports it made."""
    made = 0
    for key, partition, rec in items:
        held = _stat(repo, head.id, rec.path)
        if held is None:
            continue
        now = recorded(latest(instance, key, partition), partition)
        replaced = _replaced(instance, repo, now, held, run_ids, published_by)
        if replaced is None:
            continue
        why = _why(replaced, target, run_ids, published_by)
        meta = _restatement_metadata(repo, head, rec, held, replaced, published_by, ui_base)
        event = AssetMaterialization(key, partition=partition, description=why, metadata=meta)
        instance.report_runless_asset_event(event)
        made += 1
    return made


def _replaced(
    instance: DagsterInstance,
    repo: Repository,
    now: Recorded | None,
    held: ObjectEntry,
    run_ids: Sequence[str],
    published_by: str | None,
) -> str | None:
    """The run whose materialization ``now`` (Dagster's latest) a restatement replaces ("" for
    a run-less report none names), or None to leave it (see :func:`restate`)."""
    if now is None or now.repository != repo.name:
        return None  # not a graveler version of this repository: not ours to settle
    if now.run_id in run_ids and now.run_id != published_by:
        return now.run_id
    own = now.run_id != "" and now.run_id == published_by
    if not (own or now.restatement or _settled(instance, now.run_id)):
        return None
    if _agrees(repo, now, held):
        return None
    return now.run_id or now.restates


def _settled(instance: DagsterInstance, run_id: str) -> bool:
    """Whether run ``run_id`` will never publish its materializations again: it failed or was
    canceled, succeeded and its publication is over, or Dagster no longer knows it."""
    if not run_id:
        return False
    run = instance.get_run_by_id(run_id)
    if run is None or run.status in _NOT_PUBLISHED:
        return True
    return run.status == DagsterRunStatus.SUCCESS and run.tags.get(TAG_MERGE) in PUBLICATION_OVER


def _agrees(repo: Repository, now: Recorded, held: ObjectEntry) -> bool:
    """Whether the version ``now`` names is what the target holds (``held``): the same
    content, or, for an Iceberg table's pointer, a snapshot the target's table lists."""
    named = _stat(repo, now.commit, now.path)
    if named is None:
        return False
    if named.checksum == held.checksum:
        return True
    return now.snapshot is not None and now.snapshot in _table(repo, held)[1]


def _stat(repo: Repository, ref: str, path: str) -> ObjectEntry | None:
    try:
        return repo.stat(ref, path)
    except NotFound:
        return None


def _table(repo: Repository, pointer: ObjectEntry) -> tuple[str | None, set[str]]:
    """(current snapshot, every snapshot) of the Iceberg table metadata at ``pointer``;
    (None, empty) when it is not table metadata."""
    try:
        meta = json.loads(repo.read_entry(pointer))
        snapshots = {str(s["snapshot-id"]) for s in meta.get("snapshots", [])}
        current = meta.get("current-snapshot-id")
    except (ValueError, TypeError, KeyError, AttributeError):
        return None, set()
    return (str(current) if current is not None else None), snapshots


def _why(replaced: str, target: str, run_ids: Sequence[str], published_by: str | None) -> str:
    """The restatement's description."""
    if replaced and replaced in run_ids and replaced != published_by:
        if published_by is not None:
            return f"graveler: published by re-execution {published_by}"
        return f"graveler: run {replaced} was not published; {target} still holds this"
    named = f"run {replaced}" if replaced else "an earlier restatement"
    return f"graveler: {target} holds this version, not the one named by {named}"


def _restatement_metadata(
    repo: Repository,
    head: Commit,
    rec: Recorded,
    held: ObjectEntry,
    replaced: str,
    published_by: str | None,
    ui_base: str | None,
) -> dict[str, MetadataValue]:
    """A restatement's metadata: the target's version at ``head`` (commit-addressed), the run
    it replaces, the publishing run, and for an Iceberg table the current snapshot."""
    uri = str(GravelerURI(repo.name, head.id, rec.path))
    metadata = {
        **ui_metadata(ui_base, repo.name, head.id, rec.path),
        URI_KEY: MetadataValue.path(uri),
        "dagster/uri": MetadataValue.text(uri),
        COMMIT_KEY: MetadataValue.text(head.id),
        RESTATES_KEY: MetadataValue.text(replaced),
    }
    if published_by is not None:
        metadata[PUBLISHED_BY_KEY] = MetadataValue.text(published_by)
    current = _table(repo, held)[0] if rec.snapshot is not None else None
    if current is not None:
        metadata[SNAPSHOT_KEY] = MetadataValue.text(current)
    return metadata
