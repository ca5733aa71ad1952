"""Run lineage recorded in commit and merge metadata.

Keys follow lakeFS's commit-metadata convention for orchestrators (``::lakefs::<System>::<key>``
with a type suffix such as ``[iso8601]`` or ``[url:ui]``), so tools that understand it can show a
link back to the Airflow task instance that made the commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

PREFIX = "::lakefs::Airflow::"
DAG_ID = PREFIX + "dag_id"
RUN_ID = PREFIX + "dag_run_id"
TASK_ID = PREFIX + "task_id"
TRY_NUMBER = PREFIX + "try_number"
LOGICAL_DATE = PREFIX + "logical_date[iso8601]"
URL = PREFIX + "url[url:ui]"


def run_metadata(context: Mapping[str, Any]) -> dict[str, str]:
    """The metadata describing the task instance running in ``context``: DAG id, run id,
    task id, try number, logical date (when the run has one) and the UI link to the task."""
    ti = context["ti"]
    meta = {
        DAG_ID: str(ti.dag_id),
        RUN_ID: str(ti.run_id),
        TASK_ID: str(ti.task_id),
        TRY_NUMBER: str(ti.try_number),
        URL: str(ti.log_url),
    }
    logical_date = context.get("logical_date")
    if isinstance(logical_date, datetime):
        meta[LOGICAL_DATE] = logical_date.isoformat()
    return meta


def with_run_metadata(
    context: Mapping[str, Any], metadata: Mapping[str, Any] | None
) -> dict[str, str]:
    """The user's metadata (values stringified) with the run's lineage added; lineage keys
    win, so a commit cannot claim to come from another run."""
    merged = {str(k): str(v) for k, v in (metadata or {}).items()}
    merged.update(run_metadata(context))
    return merged
