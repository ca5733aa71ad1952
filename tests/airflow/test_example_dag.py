"""The example ETL DAG of dags_examples/airflow (PySpark on the run branch), run for real:
good data lands in main, bad data leaves main as it was."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow.parquet as pq
from graveler_airflow import lineage

from graveler.client import Graveler
from graveler.repository import Repository
from tests.airflow.harness import Workers

DAG_ID = "graveler_example_etl"
GOOD = "city,temp_c\nLisbon,21.5\nOslo,4.0\nQuito,\n"
BAD = "city,temp_c\nAtlantis,-400\n"


def _rows(repo: Repository, ref: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for entry in repo.iter_objects(ref, "clean/weather/"):
        rows += pq.read_table(io.BytesIO(repo.get(ref, entry.path))).to_pylist()
    return rows


def test_example_etl_dag_merges_good_data_and_rejects_bad(
    workers: Workers, client: Graveler, tmp_path: Path
) -> None:
    repo = client.create_repository("weather")
    (tmp_path / "good.csv").write_text(GOOD)
    (tmp_path / "bad.csv").write_text(BAD)

    good = workers.run(
        DAG_ID, {"repository": "weather", "landing": str(tmp_path / "good.csv")}, worker=1
    )
    assert good["state"] == "success", good
    head = repo.resolve("main").commit
    assert head.metadata[lineage.DAG_ID] == DAG_ID and len(head.parents) == 2
    assert repo.get("main", "raw/weather.csv").decode() == GOOD
    assert sorted(r["city"] for r in _rows(repo, "main")) == ["Lisbon", "Oslo"]
    assert {r["city"]: r["temp_f"] for r in _rows(repo, "main")}["Lisbon"] == 70.7

    bad = workers.run(
        DAG_ID, {"repository": "weather", "landing": str(tmp_path / "bad.csv")}, worker=1
    )
    assert bad["state"] == "failed" and bad["tasks"]["run.validate"] == "failed"
    assert repo.resolve("main").commit.id == head.id
    kept = bad["xcoms"]["run.create_branch:return_value"]
    assert [r["city"] for r in _rows(repo, kept)] == ["Atlantis"]  # previous parquet replaced
    assert repo.get(kept, "raw/weather.csv").decode() == BAD
