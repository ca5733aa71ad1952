"""Spark's own Parquet writer and reader through ``s3a://`` on the standalone cluster against
``graveler serve``: executors on other "hosts" (clean environments) write the run's files
through the gateway, the driver reads them back, and the branch merges into ``main``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from graveler.client import Graveler
from tests.jars import S3A_JARS, jar_paths
from tests.serving import Served
from tests.spark_cluster.cluster import StandaloneCluster
from tests.spark_cluster.conftest import BASE_CONF, JOBS, driver_env

ROWS = 40_000
#: Not ``lake``: the package's other tests keep that name in the same PostgreSQL schema.
REPO = "s3a-lake"


def test_parquet_through_s3a_on_the_cluster(
    cluster: StandaloneCluster, pg_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    secret = {"GRAVELER_AUTH_ENCRYPT_KEY": "cluster-test-server-key"}
    with Served(home, pg_url, "--workers", "2", env=secret) as server:
        server.repository(REPO, (tmp_path / "ns").as_uri())
        key = server.credentials("--repository", REPO)
        with Graveler(home, pg_url) as gv:
            repo = gv.repository(REPO)
            repo.create_branch("run-7", "main")
            env = driver_env(
                tmp_path / "driver-home",
                GRAVELER_S3_URL=server.url,
                AWS_ACCESS_KEY_ID=key.access_key_id,
                AWS_SECRET_ACCESS_KEY=key.secret_access_key,
                NO_PROXY="127.0.0.1,localhost",
            )
            conf = {**BASE_CONF, "spark.jars": ",".join(jar_paths(*S3A_JARS))}
            cfg = {"bucket": REPO, "branch": "run-7", "rows": ROWS}
            submitted = cluster.submit(
                JOBS / "s3a_job.py", [json.dumps(cfg)], env, conf, tmp_path / "driver.log"
            )
            log = submitted.log.read_text(errors="replace")
            assert submitted.results(), log[-6000:]
            assert json.loads(submitted.results()[0]) == {
                "count": ROWS,
                "sum": ROWS * (ROWS - 1) // 2,
            }
            assert key.secret_access_key not in log
            parts = [
                e
                for e in repo.iter_objects("run-7", prefix="events/")
                if e.path.endswith(".parquet")
            ]
            assert {e.path.split("/")[1] for e in parts} == {f"k={n}" for n in range(7)}
            repo.commit("run-7", "cluster run")
            repo.merge("run-7", "main")
            total = sum(pq.read_table(repo.open("main", e.path)).num_rows for e in parts)
            assert total == ROWS
