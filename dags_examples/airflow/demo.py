"""``make demo``: the example ETL DAG, run end to end by a real Airflow 3 on the embedded
default (Airflow metadata in SQLite; graveler's refs in that same database, objects on local
disk). Everything lives under ``./.demo`` and is recreated on each run; no input is read.

1. ``airflow db migrate`` creates Airflow's tables and, through the provider's DB manager,
   graveler's.
2. Run 1 (``airflow dags test``) ingests good data: its run branch is merged into ``main``.
3. Run 2 ingests implausible temperatures: validation fails, ``main`` keeps its commit and the
   run branch stays for inspection.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "providers")]

from graveler import Graveler, Repository  # noqa: E402

DEMO = Path(".demo").absolute()
DAG_ID = "graveler_example_etl"
GOOD = "city,temp_c\nLisbon,21.5\nOslo,4.0\nNairobi,25.1\nQuito,\nReykjavik,-3.5\n"
BAD = "city,temp_c\nAtlantis,-400\nLisbon,22.0\n"


def step(text: str) -> None:
    print(f"\n==> {text}", flush=True)


def environment() -> dict[str, str]:
    home = DEMO / "airflow"
    db = f"sqlite:///{home / 'airflow.db'}"
    conn = {"conn_type": "graveler", "extra": {"database_url": db, "home": str(DEMO / "graveler")}}
    path = os.pathsep.join([str(ROOT), str(ROOT / "providers"), os.environ.get("PYTHONPATH", "")])
    return {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": db,
        "AIRFLOW_CONN_GRAVELER_DEFAULT": json.dumps(conn),
        "PYTHONPATH": path.rstrip(os.pathsep),
        "GRAVELER_COMMITTER": "airflow",
    }


def airflow(env: dict[str, str], log: str, *args: str) -> int:
    """Run the ``airflow`` CLI with its output in ``.demo/logs/<log>``; returns the exit code."""
    logs = DEMO / "logs"
    logs.mkdir(exist_ok=True)
    exe = Path(sys.executable).with_name("airflow")
    with open(logs / log, "w") as out:
        done = subprocess.run(
            [str(exe), *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    print(f"    airflow {' '.join(args[:3])} ... exit {done.returncode} (log: .demo/logs/{log})")
    return done.returncode


def prepare() -> None:
    shutil.rmtree(DEMO, ignore_errors=True)
    (DEMO / "airflow" / "dags").mkdir(parents=True)
    shutil.copy(HERE / "example_etl_dag.py", DEMO / "airflow" / "dags")
    (DEMO / "landing").mkdir()
    (DEMO / "landing" / "weather.csv").write_text(GOOD)
    (DEMO / "landing" / "weather_bad.csv").write_text(BAD)


def run_dag(env: dict[str, str], log: str, landing: str) -> int:
    conf = json.dumps({"repository": "weather", "landing": str(DEMO / "landing" / landing)})
    return airflow(env, log, "dags", "test", DAG_ID, "--conf", conf)


def show_main(repo: Repository) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    head = repo.resolve("main").commit
    print(f"    main is at {head.id[:12]}: {head.message}")
    for key, value in sorted(head.metadata.items()):
        print(f"      {key} = {value}")
    for entry in repo.iter_objects("main"):
        print(f"    {entry.path:58} {entry.size:6} bytes")
    for entry in repo.iter_objects("main", "clean/weather/"):
        if entry.path.rsplit("/", 1)[-1].startswith("_"):
            continue  # the table's overwrite marker (see docs/spark.md), not data
        rows = pq.read_table(pa.BufferReader(repo.get("main", entry.path))).to_pylist()
        for row in rows:
            print(f"      {row}")


def main() -> int:
    env = environment()
    prepare()
    step("Migrate the Airflow metadata database (SQLite), graveler's tables included")
    if airflow(env, "db-migrate.log", "db", "migrate") != 0:
        return 1
    database_url = env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    with Graveler(home=DEMO / "graveler", database_url=database_url) as gv:
        repo = gv.create_repository("weather")
        print(f"    repository 'weather', objects in {repo.info.storage_namespace}")
        step(f"Run 1: {DAG_ID} with good data (branch per run, PySpark, validation)")
        if run_dag(env, "run-good.log", "weather.csv") != 0:
            print("    unexpected failure; see the log")
            return 1
        show_main(repo)
        before = repo.resolve("main").commit.id
        step(f"Run 2: {DAG_ID} with an implausible temperature")
        failed = run_dag(env, "run-bad.log", "weather_bad.csv") != 0
        after = repo.resolve("main").commit.id
        print(f"    run failed: {failed}; main unchanged: {before == after} ({after[:12]})")
        for b in repo.list_branches():
            if b.name != "main":
                print(f"    kept for inspection: branch {b.name}")
                for entry in repo.iter_objects(b.name):
                    print(f"      {entry.path:56} {entry.size:6} bytes (uncommitted)")
        step("Look around")
        print(
            f"    graveler --home {DEMO / 'graveler'} --database-url {database_url} log "
            "graveler://weather/main"
        )
        return 0 if failed and before == after else 1


if __name__ == "__main__":
    sys.exit(main())
