"""``graveler gc --spark`` on a standalone cluster, against S3 (moto) and PostgreSQL:

* as the CLI with ``--master``, its store settings given only as Spark's S3A keys in
  ``spark-defaults.conf`` (a dry run, compared with the single-process collector);
* as a ``spark-submit`` application (``python -m graveler_spark.submit`` names the file),
  where ``spark.master`` comes from ``spark-submit`` and the driver was given no credentials:
  it and the executors use their own AWS credential chains (a real run).
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from graveler_spark.submit import CLI_SCRIPT

from graveler.maintenance.gc import RetentionRules, collect_garbage
from graveler.repository import Repository
from tests.spark_cluster.cluster import StandaloneCluster, Submitted, run_logged
from tests.spark_cluster.conftest import (
    ACCESS_KEY,
    BASE_CONF,
    SECRET_KEY,
    Lake,
    driver_env,
)

KEYS = 24
GC_ARGS = ["graveler://gcrepo", "--spark", "--retention-days", "0", "--grace-hours", "0"]


@pytest.fixture(scope="module")
def repo(lake: Lake) -> Repository:
    """Two commits over the same keys on main, one more on a branch: the first commit's
    objects are garbage once commits expire immediately."""
    repo = lake.gv.create_repository("gcrepo", lake.namespace("gcrepo"))
    for round_ in (1, 2):
        for i in range(KEYS):
            repo.put("main", f"t/{i:03d}", f"round {round_} of {i}".encode())
        repo.commit("main", f"round {round_}")
    repo.create_branch("dev", "main")
    repo.put("dev", "t/dev-only", b"dev")
    repo.commit("dev", "dev work")
    return repo


def credentials_file(path: Path) -> Path:
    path.write_text(
        f"[default]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
    )
    return path


def parse(submitted: Submitted) -> dict[str, Any]:
    """The CLI's JSON document (stdout from its first line that opens one)."""
    starts = [i for i, line in enumerate(submitted.lines) if line.startswith("{")]
    assert submitted.returncode == 0 and starts, (
        f"exit {submitted.returncode}:\n" + submitted.log.read_text(errors="replace")[-6000:]
    )
    return dict(json.loads("\n".join(submitted.lines[starts[0] :])))


@pytest.fixture(scope="module")
def cli_dry_run(
    cluster: StandaloneCluster, lake: Lake, repo: Repository, tmp_path_factory: Any
) -> tuple[dict[str, Any], Path]:
    work = tmp_path_factory.mktemp("gc-cli")
    events = work / "events"
    events.mkdir()
    conf_dir = work / "conf"
    conf_dir.mkdir()
    endpoint = lake.endpoint.removeprefix("http://")
    defaults = {
        **BASE_CONF,
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.access.key": ACCESS_KEY,
        "spark.hadoop.fs.s3a.secret.key": SECRET_KEY,
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": events.as_uri(),
        "spark.eventLog.compress": "false",
    }
    (conf_dir / "spark-defaults.conf").write_text(
        "".join(f"{k} {v}\n" for k, v in defaults.items())
    )
    env = driver_env(
        work / "home", GRAVELER_DATABASE_URL=lake.database_url, SPARK_CONF_DIR=str(conf_dir)
    )
    command = [sys.executable, "-m", "graveler.cli", "--json", "gc", *GC_ARGS, "--dry-run"]
    submitted = run_logged([*command, "--master", cluster.url], env, work / "cli.log")
    return parse(submitted), events


@pytest.fixture(scope="module")
def submitted_run(
    cluster: StandaloneCluster, lake: Lake, cli_dry_run: Any, tmp_path_factory: Any
) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("gc-submit")
    env = driver_env(
        work / "home",
        GRAVELER_DATABASE_URL=lake.database_url,
        GRAVELER_S3_ENDPOINT_URL=lake.endpoint,
        AWS_DEFAULT_REGION="us-east-1",
        AWS_SHARED_CREDENTIALS_FILE=str(credentials_file(work / "driver-credentials")),
    )
    executor_chain = credentials_file(work / "executor-credentials")
    conf = {**BASE_CONF, "spark.executorEnv.AWS_SHARED_CREDENTIALS_FILE": str(executor_chain)}
    args = ["--json", "gc", *GC_ARGS]
    return parse(cluster.submit(Path(CLI_SCRIPT), args, env, conf, work / "driver.log"))


def selected(report: dict[str, Any]) -> set[str]:
    return set(report["selected"])


def test_cli_dry_run_on_the_cluster_selects_what_the_single_process_collector_does(
    cli_dry_run: Any, repo: Repository
) -> None:
    report, _ = cli_dry_run
    local = collect_garbage(repo, RetentionRules(0), grace=timedelta(0), dry_run=True)
    assert report["dry_run"] is True and report["deleted"] == 0
    assert selected(report) == {o.key for o in local.selected}
    assert len(report["selected"]) >= KEYS  # the first round's objects


def test_spark_submit_gc_deletes_them_and_every_branch_stays_readable(
    submitted_run: dict[str, Any], cli_dry_run: Any, repo: Repository, lake: Lake
) -> None:
    dry, _ = cli_dry_run
    assert submitted_run["dry_run"] is False
    assert selected(submitted_run) == selected(dry)
    assert submitted_run["deleted"] == len(dry["selected"])
    remaining = lake.bucket_keys("gcrepo/")
    assert not any(f"gcrepo/{key}" in remaining for key in selected(dry))
    for branch in ("main", "dev"):
        for entry in repo.iter_objects(branch):
            assert repo.get(branch, entry.path)


def test_s3a_secrets_in_spark_conf_are_redacted_in_the_event_log(cli_dry_run: Any) -> None:
    _, events = cli_dry_run
    logs = [p.read_text(errors="replace") for p in events.rglob("*") if p.is_file()]
    assert logs and all(SECRET_KEY not in text and ACCESS_KEY not in text for text in logs)
    assert any('"spark.hadoop.fs.s3a.secret.key":"*********(redacted)"' in t for t in logs)
