"""Which orchestrator run a branch or a commit belongs to.

Run branches are recognised by their names (the Airflow provider names them
``airflow-<dag>-<run>-<hash>``, the Dagster one ``dagster-run-<run id>``); commits by their
metadata: the lakeFS-style lineage keys ``::lakefs::Airflow::...`` / ``::lakefs::Dagster::...``
(whose ``url[url:ui]`` entry links to the run in the orchestrator's UI) and graveler's own
run key (:data:`graveler.versioning.runs.RUN_KEY`). A branch borrows its head commit's details only
when that commit names the same run: a fresh run branch's head is still the target's head,
the merge commit of some earlier run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from graveler.core.model import Commit
from graveler.server.ui.templating import http_url
from graveler.versioning.runs import RUN_KEY

AIRFLOW = "::lakefs::Airflow::"
DAGSTER = "::lakefs::Dagster::"
URL_KEY = "url[url:ui]"
_AIRFLOW_BRANCH = re.compile(r"^airflow-(?P<slug>.+)-[0-9a-f]{8}$")
_DAGSTER_BRANCH = re.compile(r"^dagster-run-(?P<run>.+)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class RunMarker:
    """A run: its orchestrator (``Airflow``, ``Dagster`` or ``run`` when unknown), a label
    (DAG and run IDs, the run ID...) and its page in the orchestrator's UI, when known."""

    system: str
    label: str
    url: str | None = None


def commit_run(commit: Commit) -> RunMarker | None:
    """The run that made ``commit``, from its metadata; None for other commits."""
    meta = commit.metadata
    if AIRFLOW + "dag_id" in meta:
        label = f"{meta[AIRFLOW + 'dag_id']} / {meta.get(AIRFLOW + 'dag_run_id', '?')}"
        return RunMarker("Airflow", label, http_url(meta.get(AIRFLOW + URL_KEY)))
    if DAGSTER + "run_id" in meta:
        job = meta.get(DAGSTER + "job_name")
        label = meta[DAGSTER + "run_id"] + (f" ({job})" if job else "")
        return RunMarker("Dagster", label, http_url(meta.get(DAGSTER + URL_KEY)))
    identity = meta.get(RUN_KEY)
    if identity:
        system = "Airflow" if identity.startswith("airflow/") else "run"
        return RunMarker(system, identity)
    return None


def branch_run(name: str, head: Commit | None) -> RunMarker | None:
    """The run a branch belongs to, from its name, with its head commit's details when that
    commit was made by the same run; None for other branches."""
    airflow = _AIRFLOW_BRANCH.match(name)
    dagster = _DAGSTER_BRANCH.match(name)
    if airflow is None and dagster is None:
        return None
    made = commit_run(head) if head is not None else None
    if airflow is not None:
        slug = airflow.group("slug")
        if made is not None and made.system == "Airflow" and _same_airflow_run(head, slug):
            return made
        return RunMarker("Airflow", slug)
    assert dagster is not None
    run_id = dagster.group("run")
    if made is not None and made.system == "Dagster" and made.label.startswith(run_id):
        return made
    return RunMarker("Dagster", run_id)


def _same_airflow_run(head: Commit | None, slug: str) -> bool:
    meta: Mapping[str, str] = head.metadata if head is not None else {}
    dag, run = meta.get(AIRFLOW + "dag_id", ""), meta.get(AIRFLOW + "dag_run_id", "")
    return slug.startswith(_UNSAFE.sub("-", f"{dag}-{run}").strip("-.")[:40])
