"""DAGs run by tests/airflow in a real Airflow deployment (copied into its dags folder).

Repository ``e2e``; everything a run does comes from its conf:

* ``writes``: ``{path: text}`` staged on the run branch;
* ``barrier``: ``{"match": TEXT, "count": N}``: after writing, wait until N branches whose
  name contains TEXT exist (so that N runs are in flight at once), unless a run matching TEXT
  was already published (a cleared run passes at once);
* ``gate``: before the barrier, wait until this path exists on ``main`` (the test opens it);
* ``fail``: the write task raises; ``fail_first_try``: it raises on its first try only.

``e2e_delta`` changes the Delta Lake table ``tables/delta_events`` with delta-rs on its run
branch (``graveler_spark.native``'s ``local_view`` and ``native_write``): conf ``delta``:
``{"mode": "append" | "overwrite", "rows": [[id, part], ...]}``, then the ``barrier``, then
``after``: wait until the run whose ID contains this text is published on main (so the
test knows which of two concurrent runs merges second).

``e2e_iceberg`` writes to an Iceberg table instead (``table``, in namespace ``iceberg``,
created on main first with one row, ``seed``): ``mode`` ``append`` adds a row naming the
run, ``overwrite`` replaces the table with it; ``barrier`` as above.
"""

from __future__ import annotations

import contextlib
import time
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from airflow.sdk import DAG, Asset, AssetWatcher, get_current_context, task
from graveler_airflow import (
    GravelerCommitEventTrigger,
    GravelerCommitOperator,
    GravelerCreateBranchOperator,
    GravelerDeleteBranchOperator,
    GravelerHook,
    GravelerMergeOperator,
    GravelerObjectSensor,
    GravelerPruneBranchesOperator,
    GravelerRevertOperator,
    GravelerRunBranch,
    GravelerTagOperator,
    graveler_asset,
)

from graveler.versioning import runs

if TYPE_CHECKING:
    from collections.abc import Callable

    from graveler import Repository

REPO = "e2e"
BARRIER_TIMEOUT = 180.0
EVENTS = graveler_asset(REPO, "main", "tables/events")
DECLARED = graveler_asset(REPO, "main", "tables/declared")
RETRIES = {"retries": 1, "retry_delay": timedelta(seconds=1)}


def _write(branch: str) -> None:
    ctx = get_current_context()
    conf = ctx["dag_run"].conf or {}
    if conf.get("fail") or (conf.get("fail_first_try") and ctx["ti"].try_number == 1):
        raise RuntimeError(f"failing on purpose (try {ctx['ti'].try_number})")
    with GravelerHook() as hook:
        repo = hook.get_repository(REPO)
        for path, text in (conf.get("writes") or {}).items():
            repo.put(branch, path, text.encode())
        deadline = time.monotonic() + BARRIER_TIMEOUT
        if conf.get("gate"):
            _until(partial(_exists, repo, conf["gate"]), f"gate {conf['gate']}", deadline)
        _barrier(repo, conf, deadline)


def _until(done: Callable[[], bool], what: str, deadline: float) -> None:
    """Wait until ``done()`` (TimeoutError naming ``what`` past ``deadline``)."""
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} never happened")
        time.sleep(0.2)


def _barrier(repo: Repository, conf: dict[str, Any], deadline: float) -> None:
    """Wait for the conf's ``barrier``, if any: ``count`` branches or publications whose
    name holds ``match``."""
    barrier: dict[str, Any] = conf.get("barrier") or {}
    if barrier:
        done = partial(_passed, repo, barrier["match"], barrier["count"])
        _until(done, f"barrier {barrier}", deadline)


def _exists(repo: Repository, path: str) -> bool:
    try:
        repo.stat("main", path)
    except LookupError:
        return False
    return True


def _passed(repo: Repository, match: str, count: int) -> bool:
    if sum(match in b.name for b in repo.list_branches()) >= count:
        return True
    recent = repo.log("main", amount=50, first_parent=True)
    return any(match in c.metadata.get(runs.RUN_KEY, "") for c in recent)


with (
    DAG("e2e_runs", schedule=None, default_args=RETRIES, tags=["graveler-tests"]),
    GravelerRunBranch(REPO, group_id="run", outlets=[DECLARED]) as run,
):

    @task
    def write(branch: str) -> None:
        _write(branch)

    write(run.branch)


DELTA_TABLE = "tables/delta_events"


def _write_delta(branch: str) -> None:
    import deltalake
    import pyarrow as pa
    from graveler_spark.native import local_view, native_write

    conf = get_current_context()["dag_run"].conf or {}
    spec = conf["delta"]
    rows = spec["rows"]
    table = pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "part": pa.array([r[1] for r in rows], pa.string()),
        }
    )
    with GravelerHook() as hook:
        gv = hook.get_conn()
        repo = gv.repository(REPO)

        def write(directory: str) -> None:
            local_view(repo, branch, DELTA_TABLE, directory)
            deltalake.write_deltalake(directory, table, mode=spec["mode"])

        native_write(f"graveler://{REPO}/{branch}/{DELTA_TABLE}", write, client=gv)
        deadline = time.monotonic() + BARRIER_TIMEOUT
        _barrier(repo, conf, deadline)
        if conf.get("after"):
            published = partial(_published, repo, conf["after"])
            _until(published, f"publication of run {conf['after']}", deadline)


def _published(repo: Repository, match: str) -> bool:
    recent = repo.log("main", amount=50, first_parent=True)
    return any(match in c.metadata.get(runs.RUN_KEY, "") for c in recent)


with (
    DAG("e2e_delta", schedule=None, default_args=RETRIES, tags=["graveler-tests"]),
    GravelerRunBranch(REPO, group_id="run") as run,
):

    @task
    def write_delta(branch: str) -> None:
        _write_delta(branch)

    write_delta(run.branch)


with DAG("e2e_iceberg", schedule=None, default_args=RETRIES, tags=["graveler-tests"]):

    @task
    def ensure_table() -> None:
        """The table on main with one row, ``seed``, created and filled in one commit (so
        every run branch starts from a table with data to replace)."""
        import pyarrow as pa
        from pyiceberg.exceptions import (
            CommitFailedException,
            NamespaceAlreadyExistsError,
            TableAlreadyExistsError,
        )

        conf = get_current_context()["dag_run"].conf or {}
        seed = pa.table({"run": ["seed"]})
        with GravelerHook() as hook:
            catalog = hook.get_iceberg_catalog(REPO)
            with contextlib.suppress(NamespaceAlreadyExistsError):
                catalog.create_namespace(("main", "iceberg"))
            with contextlib.suppress(TableAlreadyExistsError, CommitFailedException):
                ident = f"main.iceberg.{conf['table']}"
                with catalog.create_table_transaction(ident, seed.schema) as tx:
                    tx.append(seed)

    with GravelerRunBranch(REPO, group_id="run") as iceberg_run:

        @task
        def write_table(branch: str) -> None:
            import pyarrow as pa

            ctx = get_current_context()
            conf = ctx["dag_run"].conf or {}
            rows = pa.table({"run": [ctx["dag_run"].run_id]})
            with GravelerHook() as hook:
                repo = hook.get_repository(REPO)
                catalog = hook.get_iceberg_catalog(REPO)
                table = catalog.load_table((branch, "iceberg", conf["table"]))
                if conf["mode"] == "append":
                    table.append(rows)
                else:
                    table.overwrite(rows)
                _barrier(repo, conf, time.monotonic() + BARRIER_TIMEOUT)

        write_table(iceberg_run.branch)

    ensure_table() >> iceberg_run.group


with (
    DAG("e2e_discard", schedule=None, tags=["graveler-tests"]),
    GravelerRunBranch(REPO, group_id="run", delete_on_failure=True) as run,
):

    @task
    def write_then_fail(branch: str) -> None:
        _write(branch)

    write_then_fail(run.branch)


with DAG("e2e_sensor", schedule=None, tags=["graveler-tests"]):
    GravelerObjectSensor(
        task_id="wait_for_signal",
        repository=REPO,
        ref="main",
        path="signals/ready.csv",
        deferrable=True,
        trigger_poll_interval=0.5,
        timeout=600,
    )


with DAG("e2e_prune", schedule=None, tags=["graveler-tests"]):
    GravelerPruneBranchesOperator(
        task_id="prune",
        repository=REPO,
        prefix="{{ dag_run.conf['prefix'] }}",
        older_than="0s",
    )


with DAG("e2e_downstream", schedule=[EVENTS], tags=["graveler-tests"]):

    @task
    def consume() -> None:
        """Scheduled by merges that change tables/events in main."""

    consume()


OPS = "ops"  # the operators' repository
OPS_BRANCH = "ops-{{ run_id }}"

with DAG("e2e_operators", schedule=None, tags=["graveler-tests"]):
    # Each operator once, in the order a hand-built pipeline would use them.
    create = GravelerCreateBranchOperator(
        task_id="create", repository=OPS, branch=OPS_BRANCH, source="main"
    )

    @task
    def load() -> None:
        branch = f"ops-{get_current_context()['run_id']}"
        with GravelerHook() as hook:
            hook.get_repository(OPS).put(branch, "tables/t/data.csv", b"id\n1\n")

    commit = GravelerCommitOperator(
        task_id="commit",
        repository=OPS,
        branch=OPS_BRANCH,
        message="load {{ run_id }}",
        metadata={"source": "e2e"},
    )
    merge = GravelerMergeOperator(
        task_id="merge",
        repository=OPS,
        source_ref=OPS_BRANCH,
        destination_branch="main",
        strategy="source-wins",
        emit_asset_events=False,
    )
    tag = GravelerTagOperator(task_id="tag", repository=OPS, tag="release-{{ run_id }}", ref="main")
    revert = GravelerRevertOperator(
        task_id="revert", repository=OPS, branch="main", ref="main", parent_number=1
    )
    delete = GravelerDeleteBranchOperator(task_id="delete", repository=OPS, branch=OPS_BRANCH)
    create >> load() >> commit >> merge >> tag >> revert >> delete


# An asset watcher: the triggerer runs the event trigger for as long as the DAG exists.
WATCHED = Asset(
    "graveler://e2e/main/watched",
    watchers=[
        AssetWatcher(
            name="e2e-watched-lands",
            trigger=GravelerCommitEventTrigger(
                repository=REPO, branch="main", prefix="watched/", poll_interval=0.5
            ),
        )
    ],
)

with DAG("e2e_watcher", schedule=[WATCHED], tags=["graveler-tests"]):

    @task
    def react() -> None:
        """Scheduled by a commit under watched/ on e2e's main."""

    react()
