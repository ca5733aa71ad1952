"""The task link to a DAG run's branch (the "Graveler run branch" button of the task page).

Airflow 3 computes a task's extra links on the worker when the task ends and keeps them in
XCom. The link of a run-branch task is the connection's ``ui_url`` template (its
``{repository}``, ``{branch}`` and ``{uri}`` filled in) when the connection has one, for
deployments that browse their lake in a web UI; otherwise the branch's ``graveler://`` URI,
which ``graveler fs ls`` and ``ObjectStoragePath`` accept as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from airflow.sdk import BaseOperatorLink

from graveler_airflow.naming import run_branch_name

if TYPE_CHECKING:
    from airflow.sdk import BaseOperator
    from airflow.sdk.types import TaskInstanceKey

UI_URL_FIELD = "ui_url"


class GravelerRunBranchLink(BaseOperatorLink):
    """Links a run-branch task to its DAG run's branch."""

    name = "Graveler run branch"

    def get_link(self, operator: BaseOperator, *, ti_key: TaskInstanceKey) -> str:
        from graveler_airflow.hooks.graveler import GravelerHook

        op: Any = operator
        branch = run_branch_name(ti_key.dag_id, ti_key.run_id, op.branch_prefix, op.group)
        uri = f"graveler://{op.repository}/{branch}"
        extra = GravelerHook(op.graveler_conn_id).get_connection(op.graveler_conn_id).extra_dejson
        template = str(extra.get(UI_URL_FIELD) or "")
        if not template:
            return uri
        return template.format(
            repository=quote(op.repository, safe=""), branch=quote(branch, safe=""), uri=uri
        )
