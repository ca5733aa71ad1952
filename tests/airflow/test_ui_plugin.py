"""graveler's UI inside Airflow 3: the plugin's app is served by Airflow's own API app (its
plugin loading and auth manager, in a subprocess, see ``ui_probe``), refuses anonymous
requests, lists a navigation entry and a DAG-run tab, and the tab's address leads to the
run's branch or to the merge commit that published the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest
from graveler_airflow.lineage import DAG_ID, RUN_ID
from graveler_airflow.naming import DEFAULT_GROUP, run_branch_name
from graveler_airflow.ui_plugin import DAG_RUN_ROUTE, PREFIX

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.server.ui.links import AIRFLOW_PREFIX
from tests.airflow.deployment import Deployment

pytestmark = pytest.mark.slow


def _probe(env: Deployment, paths: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "tests.airflow.ui_probe", *paths],
        # The deployment lets everyone in (its components need no login); this API app is
        # built with Airflow's login on, as a production deployment runs it.
        env={**os.environ, **env.env, "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _run_path(dag_id: str, run_id: str) -> str:
    return PREFIX + DAG_RUN_ROUTE.format(dag_id=dag_id, run_id=run_id)


@pytest.fixture
def ui_lake(lake: Graveler) -> Repository:
    """A repository of its own in the deployment's refs database (PostgreSQL)."""
    return lake.create_repository("ui-lake")


def test_the_ui_runs_inside_airflow_behind_its_auth(deployment: Deployment, ui_lake: Repository):
    lake = ui_lake
    # named as a GravelerRunBranch with its default group names its branch
    running = run_branch_name("ui_dag", "manual__running", group=DEFAULT_GROUP)
    lake.create_branch(running, "main")
    lake.put(running, "out/part-0.csv", b"a,b\n1,2\n")
    done = run_branch_name("ui_dag", "manual__done", group=DEFAULT_GROUP)
    lake.create_branch(done, "main")
    lake.put(done, "out/part-1.csv", b"a,b\n3,4\n")
    lake.commit(done, "run output")
    lineage = {DAG_ID: "ui_dag", RUN_ID: "manual__done"}
    merged = lake.merge(done, "main", metadata=lineage, fast_forward=False).commit
    lake.delete_branch(done)
    home, repo_page = f"{PREFIX}/", f"{PREFIX}/repos/{lake.name}"
    paths = [
        home,
        repo_page,
        _run_path("ui_dag", "manual__running"),
        _run_path("ui_dag", "manual__done"),
        _run_path("ui_dag", "manual__never"),
    ]
    got = _probe(deployment, paths)

    for path in paths:  # Airflow's authentication guards every page of the app
        assert got["anonymous"][path]["status"] == 401, path
        assert lake.name not in got["anonymous"][path]["body"]
    for way in ("bearer", "cookie"):
        assert got[way][home]["status"] == 200 and lake.name in got[way][home]["body"]
        assert got[way][repo_page]["status"] == 200 and running in got[way][repo_page]["body"]
    bearer = got["bearer"]
    assert f"/repos/{lake.name}/log?ref={running}" in bearer[paths[2]]["url"]
    assert f"/repos/{lake.name}/commits/{merged.id}" in bearer[paths[3]]["url"]
    assert "No repository has" in bearer[paths[4]]["body"]

    (plugin,) = got["plugins"]
    views = {v["destination"]: v for v in plugin["external_views"]}
    assert views["nav"]["href"] == f"{AIRFLOW_PREFIX}/"
    assert views["dag_run"]["href"] == f"{AIRFLOW_PREFIX}/airflow/dag-run/{{DAG_ID}}/{{RUN_ID}}"
    assert [a["url_prefix"] for a in plugin["fastapi_apps"]] == [AIRFLOW_PREFIX]

    # The running api-server (which lets everyone in) loads the plugin and serves the app.
    for path in (_run_path("ui_dag", "manual__running"), repo_page):
        served = httpx.get(deployment.api + path, follow_redirects=True, timeout=60)
        assert served.status_code == 200 and running in served.text, path
