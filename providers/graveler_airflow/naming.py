"""The names of run branches: one per DAG run and run-branch group."""

from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")  # lakeFS's branch name rule
_MAX_SLUG = 180
#: The defaults of :class:`graveler_airflow.run_branch.GravelerRunBranch`: what the UI plugin
#: assumes when it looks for the run branch of a DAG run.
DEFAULT_PREFIX = "airflow"
DEFAULT_GROUP = "graveler_run"


def run_branch_name(dag_id: str, run_id: str, prefix: str = DEFAULT_PREFIX, group: str = "") -> str:
    """The branch of one DAG run (of one run-branch group): readable, valid as a graveler
    branch name, and unique per (DAG id, run id, group) thanks to a short hash of the three."""
    digest = hashlib.sha256(f"{dag_id}\x00{run_id}\x00{group}".encode()).hexdigest()[:8]
    slug = _UNSAFE.sub("-", f"{prefix}-{dag_id}-{run_id}").strip("-")[:_MAX_SLUG]
    return f"{slug}-{digest}"
