"""The ``graveler`` data source on a standalone cluster, started with ``spark-submit``: the
driver gets its settings from its environment only (refs in PostgreSQL, objects in moto S3),
the executors from the job. One application runs every step in order (see
``jobs/datasource_job.py``); the tests check what each step left behind.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from graveler.repository import Repository
from tests.spark_cluster.cluster import StandaloneCluster, Submitted
from tests.spark_cluster.conftest import (
    ACCESS_KEY,
    BASE_CONF,
    JOBS,
    SECRET_KEY,
    Lake,
    driver_env,
    env_settings,
)

ROWS = 40_000  # per write; 8 tasks on 2 executors
KILL_ROWS = 120_000  # slow tasks (0.5 s per Arrow batch of 10,000 rows): ~2 s each


@dataclass
class Kill:
    """The executor JVM the test killed, and how far the write was at that moment."""

    pid: int = 0
    started_tasks: int = 0
    error: str = ""
    done: threading.Event = field(default_factory=threading.Event)


@dataclass
class Run:
    submitted: Submitted
    steps: dict[str, dict[str, Any]]
    kill: Kill
    repo: Repository
    events: Path


def kill_an_executor(cluster: StandaloneCluster, signal_dir: Path, kill: Kill) -> None:
    """Once three tasks of the slow write have started (both executors busy), SIGKILL the
    JVM of one executor."""
    try:
        deadline = time.monotonic() + 240
        while len(list(signal_dir.glob("started-*"))) < 3:
            if time.monotonic() > deadline:
                raise TimeoutError("the slow write never started three tasks")
            time.sleep(0.1)
        pids = cluster.executor_pids()
        assert pids, "no executor JVM to kill"
        kill.started_tasks = len(list(signal_dir.glob("started-*")))
        os.kill(pids[0], signal.SIGKILL)
        kill.pid = pids[0]
    except Exception as exc:
        kill.error = repr(exc)
    finally:
        kill.done.set()


@pytest.fixture(scope="module")
def run(cluster: StandaloneCluster, lake: Lake, tmp_path_factory: pytest.TempPathFactory) -> Run:
    work = tmp_path_factory.mktemp("datasource-job")
    signal_dir, events = work / "signals", work / "events"
    signal_dir.mkdir()
    events.mkdir()
    repo = lake.gv.create_repository("lake", lake.namespace("lake"))
    repo.create_branch("etl", "main")
    kill = Kill()

    def on_line(line: str) -> None:
        if line == "KILL-WINDOW-OPEN":
            args = (cluster, signal_dir, kill)
            threading.Thread(target=kill_an_executor, args=args, daemon=True).start()

    cfg = {
        "steps": ["write_read", "merge", "retry", "fail", "kill"],
        "rows": ROWS,
        "kill_rows": KILL_ROWS,
        "signal_dir": str(signal_dir),
    }
    conf = {
        **BASE_CONF,
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": events.as_uri(),
        "spark.eventLog.compress": "false",
    }
    env = driver_env(work / "home", **env_settings(lake))
    submitted = cluster.submit(
        JOBS / "datasource_job.py", [json.dumps(cfg)], env, conf, work / "driver.log", on_line
    )
    kill.done.wait(timeout=60)
    steps = {doc["step"]: doc for doc in map(json.loads, submitted.results())}
    return Run(submitted, steps, kill, repo, events)


def finished(run: Run, step: str) -> dict[str, Any]:
    assert step in run.steps, (
        f"step {step!r} did not finish (exit {run.submitted.returncode}); driver log:\n"
        + run.submitted.log.read_text(errors="replace")[-6000:]
    )
    return run.steps[step]


def commits_since(repo: Repository, branch: str, message: str) -> list[str]:
    return [c.message for c in repo.log(branch) if c.message == message]


def test_write_then_read_on_the_cluster_is_exact_and_one_commit(run: Run, lake: Lake) -> None:
    step = finished(run, "write_read")
    assert step["read"] == step["source"] and step["source"][0] == ROWS
    assert commits_since(run.repo, "etl", "events from the cluster") == ["events from the cluster"]
    files = list(run.repo.iter_objects("main", "events/"))  # merged into main afterwards
    assert len(files) == 8  # one Parquet file per task
    keys = lake.bucket_keys("lake/")
    assert all(keys.get(f"lake/{f.physical_address}") == f.size for f in files)


def test_fast_forward_and_three_way_merges_read_back_on_the_cluster(run: Run) -> None:
    step = finished(run, "merge")
    assert step["fast_forward"] is True
    assert step["main_after_ff"] == finished(run, "write_read")["source"]
    assert step["three_way_parents"] == 2
    assert [step["main"][p][0] for p in ("events", "more", "dims")] == [ROWS, 1000, 500]
    assert run.repo.resolve("main").commit.message == "three-way"


def test_a_task_failing_once_is_retried_and_exact(run: Run) -> None:
    step = finished(run, "retry")
    assert step["read"] == step["source"] and step["source"][0] == ROWS


def test_a_task_failing_every_time_leaves_no_commit_and_nothing_staged(run: Run) -> None:
    step = finished(run, "fail")
    assert step["error"] and "injected failure in partition 3" in step["error"]
    assert commits_since(run.repo, "etl", "never") == []
    assert list(run.repo.iter_objects("etl", "failed/")) == []


def test_killing_an_executor_mid_write_loses_and_duplicates_nothing(
    run: Run, cluster: StandaloneCluster
) -> None:
    step = finished(run, "kill")
    assert run.kill.error == "" and run.kill.pid > 0
    assert run.kill.started_tasks < 8  # the write was under way, not done
    assert step["read"] == step["source"] and step["source"][0] == KILL_ROWS
    assert commits_since(run.repo, "etl", "survived") == ["survived"]
    app = finished(run, "app")["id"]
    executors = [d for n in range(cluster.workers) for d in (cluster.worker_dir(n) / app).glob("*")]
    assert len(executors) >= 3  # the killed executor was replaced


def test_the_bucket_holds_exactly_what_the_refs_reference(run: Run, lake: Lake) -> None:
    """No object of a failed task, a killed executor or an aborted job is left behind, and
    nothing referenced is missing."""
    finished(run, "kill")
    referenced: set[str] = set()
    for branch in ("main", "etl"):
        for commit in run.repo.log(branch):
            referenced |= {e.physical_address for e in run.repo.iter_objects(commit.id)}
        referenced |= {e.physical_address for e in run.repo.iter_objects(branch)}
    data = {k.removeprefix("lake/") for k in lake.bucket_keys("lake/data/")}
    assert data == referenced


def test_no_secret_in_logs_errors_or_event_logs(run: Run, cluster: StandaloneCluster) -> None:
    finished(run, "kill")
    texts = [run.submitted.log, *run.events.rglob("*"), *cluster.root.rglob("worker-*/**/*")]
    texts += [p.log for p in [cluster.master, *cluster.worker_processes] if p is not None]
    scanned = 0
    for path in texts:
        if path.is_file():
            content = path.read_text(errors="replace")
            scanned += 1
            assert SECRET_KEY not in content, path
            assert ACCESS_KEY not in content, path
    assert scanned > 5
    assert "\n".join(run.submitted.lines).count(SECRET_KEY) == 0
