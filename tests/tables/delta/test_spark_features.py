"""Writer features delta-rs does not write, with delta-spark (the oracle's process) writing
both branches and reading the merged table: in-commit timestamps and deletion vectors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graveler.client import Graveler
from graveler.repository import Repository
from tests.tables.delta import ops
from tests.tables.delta.conftest import SparkOracle
from tests.tables.delta.workdir import checkout, publish

ROOT = "t/"
LOG = ROOT + "_delta_log/"


@pytest.fixture
def gv(tmp_path: Path) -> Iterator[Graveler]:
    """On SQLite only: the database plays no part here, Spark's time does."""
    client = Graveler(home=tmp_path / "home", database_url=f"sqlite:///{tmp_path / 'refs.db'}")
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def repo(gv: Graveler, tmp_path: Path) -> Repository:
    return gv.create_repository("lake", (tmp_path / "ns").as_uri())


def _properties(**props: str) -> ops.Spec:
    pairs = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
    return {"op": "sql", "sql": f"ALTER TABLE {{table}} SET TBLPROPERTIES ({pairs})"}


def _branches(
    repo: Repository,
    oracle: SparkOracle,
    tmp_path: Path,
    base: list[ops.Spec],
    dest: list[ops.Spec],
    source: list[ops.Spec],
) -> Path:
    """The base on main, ``dest`` and ``source`` run by delta-spark on branches d and s,
    both merged into main (d first); the merged table, checked out."""
    oracle.ask(cmd="run", path=str(tmp_path / "base"), steps=base)
    publish(repo, "main", ROOT, tmp_path / "base", "base")
    for branch, steps in (("d", dest), ("s", source)):
        repo.create_branch(branch, "main")
        work = checkout(repo, branch, ROOT, tmp_path / branch)
        oracle.ask(cmd="run", path=str(work), steps=steps)
        publish(repo, branch, ROOT, work, f"{branch} by delta-spark")
    repo.merge("d", "main")
    repo.merge("s", "main")
    return checkout(repo, "main", ROOT, tmp_path / "merged")


def _commit_info(repo: Repository, version: int) -> dict[str, Any]:
    first = repo.get("main", f"{LOG}{version:020d}.json").splitlines()[0]
    info: dict[str, Any] = json.loads(first)["commitInfo"]
    return info


def test_in_commit_timestamps_stay_increasing_for_delta_spark(
    repo: Repository, spark_oracle: SparkOracle, tmp_path: Path
):
    base = [*ops.BASE, _properties(**{"delta.enableInCommitTimestamps": "true"})]
    # the source commits first, so its own timestamp is older than the destination's
    merged = _branches(
        repo, spark_oracle, tmp_path, base, [ops.append((10, "a"))], [ops.append((20, "b"))]
    )
    stamps = [_commit_info(repo, v)["inCommitTimestamp"] for v in (2, 3, 4)]
    assert stamps[0] < stamps[1] < stamps[2]
    assert spark_oracle.ask(cmd="read", path=str(merged))["rows"] == ops.rows(merged)
    for version, count in ((3, 4), (4, 5)):
        rows = spark_oracle.ask(cmd="read", path=str(merged), version=version)["rows"]
        assert len(rows) == count


def test_deletion_vectors_of_the_source_are_carried(
    repo: Repository, spark_oracle: SparkOracle, tmp_path: Path
):
    base = [
        {"op": "create", "rows": [[1, "a"], [2, "b"], [4, "b"]]},
        _properties(**{"delta.enableDeletionVectors": "true"}),
    ]
    merged = _branches(
        repo,
        spark_oracle,
        tmp_path,
        base,
        [ops.append((10, "a"))],
        [ops.delete("part = 'b' AND id = 4")],
    )
    dvs = [e.path for e in repo.iter_objects("main", prefix=ROOT) if "deletion_vector" in e.path]
    assert dvs, "the delete wrote no deletion vector: the test proves nothing"
    # (delta-rs 1.6.6's reader refuses tables with deletion vectors)
    expected = [[1, "a"], [10, "a"], [2, "b"]]
    assert spark_oracle.ask(cmd="read", path=str(merged))["rows"] == expected


def test_delta_spark_through_native_write_and_local_view(
    gv: Graveler, repo: Repository, spark_oracle: SparkOracle, tmp_path: Path
):
    """The project's own path for Spark writers on a local namespace: ``native_write`` runs
    delta-spark into the namespace (over a ``local_view`` of the table) and stages what it
    wrote; two run branches append this way and both merge."""
    from graveler_spark.native import local_view, native_write

    def spark_write(branch: str, step: ops.Spec) -> None:
        def write(directory: str) -> None:
            local_view(repo, branch, ROOT, directory)
            spark_oracle.ask(cmd="run", path=directory, steps=[step])

        native_write(f"graveler://lake/{branch}/{ROOT}", write, client=gv)
        repo.commit(branch, f"{step['op']} by delta-spark")

    spark_write("main", ops.BASE[0])
    for branch, spec in (("r1", ops.append((10, "a"))), ("r2", ops.append((20, "b")))):
        repo.create_branch(branch, "main")
        spark_write(branch, spec)
    repo.merge("r1", "main")
    repo.merge("r2", "main")
    names = [e.path for e in repo.iter_objects("main", prefix=LOG)]
    assert [n for n in names if n.endswith(".json")] == [f"{LOG}{v:020d}.json" for v in range(3)]
    assert not [n for n in names if n.endswith(".crc")], "native_write leaves checksums out"
    merged = checkout(repo, "main", ROOT, tmp_path / "merged")
    expected = [[1, "a"], [10, "a"], [2, "b"], [20, "b"]]
    assert spark_oracle.ask(cmd="read", path=str(merged))["rows"] == expected
