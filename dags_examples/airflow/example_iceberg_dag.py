"""Example: an Iceberg table that concurrent runs append to, each on its own branch.

    ensure_table  create the table analytics.events on main if it is missing (idempotent)
    run branch    airflow-graveler_example_iceberg-<run id>-<hash>   (created from main)
      append      this run's rows appended to the table on the run branch: one Iceberg commit
      merge       merge commit into main (run metadata), asset events

Two runs of this DAG at once both land: when the second merges, main's table already has
the first run's snapshot, and graveler replays the second run's snapshot on top of it the
way Iceberg retries a commit (appends combine; an overwrite of rows the other run touched
would be a conflict, and that run's merge task would fail, leaving main untouched).

Every Iceberg client reads the table through ``graveler serve``'s REST catalog as
``main.analytics.events`` of warehouse ``<repository>`` (docs/iceberg.md). Connection:
``graveler_default``. Params: ``repository`` (default ``lake``), ``rows`` (how many rows this
run appends, default 3).
"""

from __future__ import annotations

import contextlib
from typing import Any

from airflow.sdk import DAG, get_current_context, task
from graveler_airflow import GravelerHook, GravelerRunBranch

NAMESPACE = "analytics"
TABLE = "events"


def _catalog(hook: GravelerHook, **labels: str) -> Any:
    return hook.get_iceberg_catalog(get_current_context()["params"]["repository"], **labels)


with DAG(
    "graveler_example_iceberg",
    schedule=None,
    params={"repository": "lake", "rows": 3},
    tags=["graveler", "example", "iceberg"],
    doc_md=__doc__,
):

    @task
    def ensure_table() -> None:
        """Create the namespace and the table on main unless they exist (another run may be
        creating them at the same moment: whoever loses finds them there)."""
        import pyarrow as pa
        from pyiceberg.exceptions import NamespaceAlreadyExistsError, TableAlreadyExistsError

        schema = pa.schema([("run_id", pa.string()), ("n", pa.int64()), ("at", pa.string())])
        with GravelerHook() as hook:
            catalog = _catalog(hook)
            with contextlib.suppress(NamespaceAlreadyExistsError):
                catalog.create_namespace(("main", NAMESPACE))
            with contextlib.suppress(TableAlreadyExistsError):
                catalog.create_table(f"main.{NAMESPACE}.{TABLE}", schema)

    with GravelerRunBranch("{{ params.repository }}", group_id="run") as run:

        @task
        def append(branch: str) -> int:
            """Append this run's rows to the table on the run branch."""
            from datetime import UTC, datetime

            import pyarrow as pa

            ctx = get_current_context()
            run_id = ctx["dag_run"].run_id
            count = int(ctx["params"]["rows"])
            rows = pa.table(
                {
                    "run_id": [run_id] * count,
                    "n": list(range(count)),
                    "at": [datetime.now(UTC).isoformat()] * count,
                }
            )
            with GravelerHook() as hook:
                table = _catalog(hook, run=run_id).load_table((branch, NAMESPACE, TABLE))
                table.append(rows)
            return count

        append(run.branch)

    ensure_table() >> run.group
