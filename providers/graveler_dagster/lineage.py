"""What Dagster's asset lineage says about graveler, and keeping it in agreement with the target.

Every materialization the IO manager records carries ``graveler/uri``: a commit-addressed URI
(``graveler://<repo>/<commit id>/<path>``) naming exactly the version written. Two things can
make Dagster's *latest* materialization of an asset disagree with the target branch:

* the run that materialized it failed later, so it was never published: the target still
  holds the previous version (or none);
* a re-execution published outputs its failed parent had produced: Dagster's latest record
  for them is the parent's (or a restatement of the target made when the parent failed).

:func:`restate` settles both by reporting a run-less materialization of the version the
target holds, marked ``graveler/restates_run``. It only restates an asset (partition) whose
latest materialization is still the run's (or an earlier restatement), so it never hides a
newer materialization.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from dagster import (
    AssetKey,
    AssetMaterialization,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    EventLogEntry,
    MetadataValue,
)

from graveler import Commit, GravelerURI, Repository
from graveler.errors import InvalidArgument, NotFound
from graveler.ui.links import Links

URI_KEY = "graveler/uri"
COMMIT_KEY = "graveler/commit"
#: Metadata of a restatement: the run whose materialization it replaces.
RESTATES_KEY = "graveler/restates_run"
#: Metadata of a restatement made when a re-execution published: that run.
PUBLISHED_BY_KEY = "graveler/published_by_run"
#: The version's page in graveler's web UI, when the resource names one (``graveler_ui_url``).
UI_KEY = "graveler/ui"


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
    wrote ``path`` in ``repository``, readable at ``commit``."""

    run_id: str
    repository: str
    commit: str
    path: str
    restatement: bool


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
    return Recorded(
        entry.run_id, uri.repository, str(commit.value), path, RESTATES_KEY in mat.metadata
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


def restate(
    instance: DagsterInstance,
    repo: Repository,
    commit: Commit,
    run_ids: Sequence[str],
    *,
    published_by: str | None = None,
    ui_base: str | None = None,
) -> int:
    """Report, for each asset (partition) the runs materialized in ``repo`` whose latest
    materialization is still theirs (or a restatement), the version ``commit`` holds (see the
    module docstring); nothing where ``commit`` holds none. Returns how many were reported.
    With ``ui_base`` (the resource's ``graveler_ui_url``) each report links into the UI."""
    reported = 0
    done: set[tuple[AssetKey, str | None]] = set()
    for key, partition, rec in materializations_of(instance, run_ids):
        if rec.repository != repo.name or (key, partition) in done:
            continue
        done.add((key, partition))
        now = recorded(latest(instance, key, partition), partition)
        if now is None or not (now.run_id in run_ids or now.restatement):
            continue
        try:
            repo.stat(commit.id, rec.path)
        except NotFound:
            continue
        ui = ui_metadata(ui_base, repo.name, commit.id, rec.path)
        instance.report_runless_asset_event(
            _restatement(key, partition, repo.name, commit, rec, published_by, ui)
        )
        reported += 1
    return reported


def _restatement(
    key: AssetKey,
    partition: str | None,
    repository: str,
    commit: Commit,
    rec: Recorded,
    published_by: str | None,
    ui: dict[str, MetadataValue],
) -> AssetMaterialization:
    uri = str(GravelerURI(repository, commit.id, rec.path))
    metadata = {
        **ui,
        URI_KEY: MetadataValue.path(uri),
        "dagster/uri": MetadataValue.text(uri),
        COMMIT_KEY: MetadataValue.text(commit.id),
        RESTATES_KEY: MetadataValue.text(rec.run_id),
    }
    if published_by is not None:
        metadata[PUBLISHED_BY_KEY] = MetadataValue.text(published_by)
        what = f"published by re-execution {published_by}"
    else:
        what = f"run {rec.run_id} failed and was not published; the target still holds this"
    return AssetMaterialization(
        key, partition=partition, description=f"graveler: {what}", metadata=metadata
    )
