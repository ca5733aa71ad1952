"""``make tour``: a first tour of graveler on the embedded default (SQLite + local disk).

A tiny pipeline run gets its own branch, writes raw and cleaned data there, validates it,
commits, shows the diff against ``main``, merges into ``main`` and prints the log. A second run
with bad data fails validation and leaves ``main`` untouched.

Everything lives under ``./.graveler-demo`` (recreated on each run).
"""

from __future__ import annotations

import csv
import io
import shutil
import sys
import uuid
from pathlib import Path

from graveler.client import Graveler
from graveler.repository import Repository

HOME = Path(".graveler-demo")
RAW = "city,temp_c\nLisbon,21.5\nOslo,4.0\nNairobi,25.1\nQuito,\n"
BAD_RAW = "city,temp_c\nAtlantis,-400\n"


def step(text: str) -> None:
    print(f"\n\033[1m==> {text}\033[0m")


def clean(raw: bytes) -> bytes:
    """Drop rows without a temperature; add Fahrenheit."""
    rows = [r for r in csv.DictReader(io.StringIO(raw.decode())) if r["temp_c"]]
    out = io.StringIO()
    writer = csv.DictWriter(out, ["city", "temp_c", "temp_f"], lineterminator="\n")
    writer.writeheader()
    for r in rows:
        c = float(r["temp_c"])
        writer.writerow({"city": r["city"], "temp_c": c, "temp_f": round(c * 9 / 5 + 32, 1)})
    return out.getvalue().encode()


def validate(data: bytes) -> None:
    for r in csv.DictReader(io.StringIO(data.decode())):
        if not -90 <= float(r["temp_c"]) <= 60:
            raise ValueError(f"implausible temperature for {r['city']}: {r['temp_c']}")


def pipeline_run(repo: Repository, raw: str) -> None:
    run_branch = f"run-{uuid.uuid4().hex[:8]}"
    step(f"Run {run_branch}: isolated branch from main")
    repo.create_branch(run_branch, "main")
    repo.put(run_branch, "raw/weather.csv", raw.encode(), content_type="text/csv")
    cleaned = clean(repo.get(run_branch, "raw/weather.csv"))
    repo.put(run_branch, "clean/weather.csv", cleaned, content_type="text/csv")
    try:
        validate(cleaned)
    except ValueError as exc:
        print(f"    validation failed: {exc}")
        print(f"    main is untouched; branch {run_branch} is kept for inspection")
        return
    commit = repo.commit(run_branch, "Ingest and clean weather", metadata={"run": run_branch})
    print(f"    committed {commit.id[:12]} on {run_branch}")
    step(f"Diff main..{run_branch}")
    for d in repo.diff("main", run_branch):
        print(f"    {d.type.value:8} {d.path}")
    step(f"Merge {run_branch} into main")
    merged = repo.merge(run_branch, "main", fast_forward=False, metadata={"run": run_branch})
    print(f"    main is now at {merged.commit.id[:12]}")
    repo.delete_branch(run_branch)


def main() -> int:
    shutil.rmtree(HOME, ignore_errors=True)
    with Graveler(home=HOME) as gv:
        step("Create repository 'weather' (SQLite refs, local-disk storage)")
        repo = gv.create_repository("weather")
        print(f"    storage namespace: {repo.info.storage_namespace}")
        pipeline_run(repo, RAW)
        pipeline_run(repo, BAD_RAW)
        step("main now holds")
        for e in repo.iter_objects("main"):
            print(f"    {e.path:22} {e.size:5} bytes  sha256 {e.checksum[:12]}")
        print("\n" + repo.get("main", "clean/weather.csv").decode())
        step("Log of main")
        for c in repo.log("main"):
            print(f"    {c.id[:12]}  {c.message}  {dict(c.metadata) or ''}")
        step("Try the CLI on the same state")
        print(f"    .venv/bin/graveler --home {HOME} log graveler://weather/main")
        print(f"    .venv/bin/graveler --home {HOME} fs ls graveler://weather/main/ --recursive")
    return 0


if __name__ == "__main__":
    sys.exit(main())
