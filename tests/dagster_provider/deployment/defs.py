"""The Dagster project the deployment test serves with a real code server, webserver and daemon
(and runs once with ``dagster asset materialize -f`` against the same instance).

Graveler's refs live in Dagster's own PostgreSQL database (the resource's default when
``dagster.yaml`` has PostgreSQL storage); its cache and namespace under
``$GRAVELER_E2E_DIR/lakehome`` (not ``graveler/``: the working directory is on ``sys.path``).

* ``events`` (3 static partitions): three runs of it at once, which wait for each other, so
  they overlap and merge concurrently;
* ``extracted`` -> ``checked``: ``checked`` fails while ``$GRAVELER_E2E_DIR/fail`` exists
  (a failure, then its re-execution from failure);
* ``prices`` -> ``report``: ``prices`` writes the version in ``$GRAVELER_E2E_DIR/prices``;
  ``report`` records the version it read (downstream right after upstream);
* ``ingested`` reads ``incoming/feed`` (written outside Dagster) in runs requested by the diff
  sensor on ``incoming/``;
* ``delta_events`` changes the Delta Lake table ``tables/delta_events`` with delta-rs on the
  run's branch (``graveler_spark.native``), as its run's tags say: ``delta/mode`` (append or
  overwrite), ``delta/rows`` (JSON), ``delta/group`` (waits until two runs of the group have
  written, so they overlap) and ``delta/after`` (waits until that run is merged into main,
  so the test knows which run merges second).
* ``appended`` and ``replaced``: Iceberg tables (GravelerIcebergIOManager). ``appended``
  appends a row naming its run; ``replaced`` replaces the table, in runs tagged
  ``graveler/merge_strategy: none``. Once ``$GRAVELER_E2E_DIR/<asset>-peers`` names a
  number, each run waits until that many runs of the asset have started (they overlap).
"""

import json
import os
import time
from pathlib import Path

import dagster as dg
import pandas as pd
import pyarrow as pa
from graveler_dagster import (
    GravelerIcebergIOManager,
    GravelerResource,
    build_graveler_diff_sensor,
    graveler_definitions,
    open_run_branch,
)

from graveler.versioning import runs

WORKDIR = Path(os.environ.get("GRAVELER_E2E_DIR", "."))
INTERVAL = int(os.environ.get("GRAVELER_E2E_SENSOR_INTERVAL", "30"))
PARTS = dg.StaticPartitionsDefinition(["a", "b", "c"])


@dg.asset(partitions_def=PARTS)
def events(context: dg.AssetExecutionContext) -> pd.DataFrame:
    """Waits until the runs of all three partitions are running (a barrier: the runs overlap,
    so their commits and merges are concurrent); fails after two minutes without them."""
    (WORKDIR / f"started-{context.partition_key}").touch()
    deadline = time.monotonic() + 120
    while len(list(WORKDIR.glob("started-*"))) < 3:
        if time.monotonic() > deadline:
            raise RuntimeError("the three partition runs never ran at the same time")
        time.sleep(0.2)
    return pd.DataFrame({"part": [context.partition_key] * 3, "n": [1, 2, 3]})


@dg.asset
def extracted() -> pd.DataFrame:
    return pd.DataFrame({"v": [1, 2, 3]})


@dg.asset
def checked(extracted: pd.DataFrame) -> pd.DataFrame:
    if (WORKDIR / "fail").exists():
        raise RuntimeError("upstream system not ready")
    return extracted.assign(ok=True)


@dg.asset
def prices() -> pd.DataFrame:
    version = int((WORKDIR / "prices").read_text())
    return pd.DataFrame({"version": [version], "price": [10.0 * version]})


@dg.asset
def report(prices: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"version_read": prices["version"]})


incoming_feed = dg.AssetSpec(["incoming", "feed"])


@dg.asset(ins={"feed": dg.AssetIn(incoming_feed.key)})
def ingested(feed: pd.DataFrame) -> pd.DataFrame:
    return feed.assign(ingested=True)


DELTA_TABLE = "tables/delta_events"


@dg.asset
def delta_events(
    context: dg.AssetExecutionContext, graveler: GravelerResource
) -> dg.MaterializeResult:
    import deltalake
    import pyarrow as pa
    from graveler_spark.native import local_view, native_write

    tags = context.run.tags
    rows = json.loads(tags["delta/rows"])
    table = pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "part": pa.array([r[1] for r in rows], pa.string()),
        }
    )
    repo, branch = open_run_branch(graveler, context)

    def write(directory: str) -> None:
        local_view(repo, branch, DELTA_TABLE, directory)
        deltalake.write_deltalake(directory, table, mode=tags["delta/mode"])

    uri = f"graveler://{repo.name}/{branch}/{DELTA_TABLE}"
    native_write(uri, write, client=graveler.get_client())
    group = tags["delta/group"]
    (WORKDIR / f"delta-{group}-{context.run.run_id}").touch()
    _wait(lambda: len(list(WORKDIR.glob(f"delta-{group}-*"))) >= 2, f"group {group}")
    after = tags.get("delta/after")
    if after:
        merged = f"dagster/{after}"
        _wait(
            lambda: any(
                c.metadata.get(runs.RUN_KEY) == merged
                for c in repo.log("main", amount=50, first_parent=True)
            ),
            f"run {after} to be merged",
        )
    return dg.MaterializeResult()


def _wait(check, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 180
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"waited too long for {what}")
        time.sleep(0.2)


def _with_peers(name: str, run_id: str) -> None:
    """Wait until as many runs of ``name`` as ``<name>-peers`` says have started."""
    peers = WORKDIR / f"{name}-peers"
    if not peers.exists():
        return
    (WORKDIR / f"started-{name}-{run_id}").touch()
    deadline = time.monotonic() + 120
    while len(list(WORKDIR.glob(f"started-{name}-*"))) < int(peers.read_text()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the runs of {name} never ran at the same time")
        time.sleep(0.2)


@dg.asset(io_manager_key="iceberg", metadata={"write_mode": "append"})
def appended(context: dg.AssetExecutionContext) -> pa.Table:
    _with_peers("appended", context.run_id)
    return pa.table({"run": [context.run_id]})


@dg.asset(io_manager_key="iceberg")
def replaced(context: dg.AssetExecutionContext) -> pa.Table:
    _with_peers("replaced", context.run_id)
    return pa.table({"run": [context.run_id]})


ingested_job = dg.define_asset_job("ingest", selection=[ingested])
on_incoming = build_graveler_diff_sensor(
    "lake", "main", "incoming/", ingested_job, minimum_interval_seconds=INTERVAL
)
resource = GravelerResource(repository="lake", home=str(WORKDIR / "lakehome"))
pieces = graveler_definitions(
    resource, sensor_interval_seconds=INTERVAL, extra_sensors=[on_incoming]
)
pieces["resources"]["iceberg"] = GravelerIcebergIOManager(graveler=resource)

defs = dg.Definitions(
    assets=[
        events,
        extracted,
        checked,
        prices,
        report,
        incoming_feed,
        ingested,
        delta_events,
        appended,
        replaced,
    ],
    jobs=[
        ingested_job,
        dg.define_asset_job("events_job", selection=[events], partitions_def=PARTS),
        dg.define_asset_job("etl", selection=[extracted, checked]),
        dg.define_asset_job("prices_job", selection=[prices]),
        dg.define_asset_job("report_job", selection=[report]),
        dg.define_asset_job("delta_job", selection=[delta_events]),
        dg.define_asset_job("appended_job", selection=[appended]),
        dg.define_asset_job(
            "replaced_job", selection=[replaced], tags={"graveler/merge_strategy": "none"}
        ),
    ],
    executor=dg.in_process_executor,  # one process per run: 2 cores
    **pieces,
)
