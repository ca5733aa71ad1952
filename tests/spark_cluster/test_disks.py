"""``file://`` namespaces on the cluster (see ``jobs/disks_job.py``).

Each worker runs in its own mount namespace with a tmpfs over ``private/`` (as root): a
namespace there is on a disk no other host sees, which nothing may commit. A namespace
elsewhere is on a disk every host shares, which must keep working with no extra option. The
job runs with ``fs.defaultFS`` pointing at an HDFS that does not exist (and no retries), so
any path handed to Spark without its scheme would fail.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.spark_cluster.cluster import StandaloneCluster, in_namespace_of
from tests.spark_cluster.conftest import BASE_CONF, IN_CI, JOBS, driver_env

ROWS = 20_000
SHARED_FILESYSTEM = "must be on a filesystem that the driver and every executor mount"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def steps(cluster: StandaloneCluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if cluster.private_dir is None:
        assert not IN_CI, "CI and make test run as root: the workers must have private disks"
        pytest.skip("workers get disks of their own only as root (unshare -m)")
    work = tmp_path_factory.mktemp("disks-job")
    shared = work / "shared-ns"
    cfg = {"steps": ["isolated", "shared"], "rows": ROWS, "shared_namespace": str(shared)}
    conf = {
        **BASE_CONF,
        "spark.hadoop.fs.defaultFS": f"hdfs://127.0.0.1:{free_port()}",
        "spark.hadoop.ipc.client.connect.max.retries": "0",
    }
    home = cluster.private_dir / "graveler-home"  # the driver's disk; each worker has a tmpfs
    env = driver_env(work / "home", GRAVELER_HOME=str(home))
    submitted = cluster.submit(
        JOBS / "disks_job.py", [json.dumps(cfg)], env, conf, work / "driver.log"
    )
    found = {doc["step"]: doc for doc in map(json.loads, submitted.results())}
    assert set(found) == {"isolated", "shared"}, submitted.log.read_text(errors="replace")[-6000:]
    return found


def test_a_namespace_the_workers_do_not_share_commits_nothing(steps: dict[str, Any]) -> None:
    isolated = steps["isolated"]
    assert isolated["source_error"] and SHARED_FILESYSTEM in isolated["source_error"]
    assert "NamespaceNotShared" in isolated["source_error"]
    assert isolated["native_error"].startswith("NamespaceNotShared: Spark wrote ")
    assert SHARED_FILESYSTEM in isolated["native_error"]
    assert isolated["commits"] == ["Repository created"]
    assert isolated["objects"] == []  # nothing staged
    assert isolated["data_files"] == []  # nothing left that the driver can see


def test_spark_wrote_the_native_files_on_the_workers_own_disks(
    steps: dict[str, Any], cluster: StandaloneCluster
) -> None:
    """The failure above is the real one: the CSV parts are on the workers' tmpfs."""
    data = str(Path(steps["isolated"]["namespace"]) / "data")
    seen = [
        in_namespace_of(w.pid, ["find", data, "-name", "part-*.csv"])
        for w in cluster.worker_processes
    ]
    assert sum(text.count("part-") for text in seen) == 8


def test_a_namespace_every_host_shares_works_whatever_fs_default_fs_says(
    steps: dict[str, Any],
) -> None:
    shared = steps["shared"]
    assert shared["default_fs"].startswith("hdfs://127.0.0.1:")
    assert shared["source"] == shared["expected"] and shared["expected"][0] == ROWS
    assert shared["native"] == shared["expected"]
    assert shared["commits"][:2] == ["native", "source"]
    objects = shared["objects"]
    assert len([o for o in objects if o.startswith("events/")]) == 8  # one per task
    assert len([o for o in objects if o.startswith("native/k=")]) == shared["native_entries"]
    assert len(shared["data_files"]) == len(objects)  # no marker, no stray file
