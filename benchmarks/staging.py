"""Suite ``staging``: single puts per second (object bytes + one staging transaction each) and
stage-many throughput (one transaction), on SQLite and on PostgreSQL.

PostgreSQL runs when GRAVELER_TEST_POSTGRES_URL (or GRAVELER_BENCH_POSTGRES_URL) is set; each
run uses a fresh schema that is dropped afterwards."""

from __future__ import annotations

from typing import Any

from benchmarks.lake import Context, env_postgres_url, lake_entry, lake_path, timed
from benchmarks.report import table
from graveler.client import Graveler
from graveler.storage.refs.scratch import scratch_schema

PUTS = 2_000


def measure(ctx: Context, database_url: str, many: int) -> dict[str, float]:
    home = ctx.fresh_dir("staging")
    with Graveler(home=home, database_url=database_url) as gv:
        repo = gv.create_repository("staging", (home / "ns").as_uri())
        put_s = timed(lambda: [repo.put("main", f"puts/{i:06d}", b"x" * 100) for i in range(PUTS)])
        entries = [lake_entry(lake_path(i)) for i in range(many)]
        many_s = timed(lambda: repo.stage_entries("main", entries))
    return {"puts_per_s": PUTS / put_s, "stage_many_per_s": many / many_s, "stage_many": many}


def run(ctx: Context) -> dict[str, Any]:
    many = min(ctx.n, 200_000)
    out: dict[str, Any] = {"sqlite": measure(ctx, f"sqlite:///{ctx.fresh_dir('sq')}/refs.db", many)}
    pg = ctx.postgres_url or env_postgres_url()
    if pg:
        with scratch_schema(pg, "bench_") as url:
            out["postgresql"] = measure(ctx, url, many)
    else:
        print("  [staging] PostgreSQL skipped: set GRAVELER_BENCH_POSTGRES_URL to include it")
    rows = [(db, r["puts_per_s"], r["stage_many_per_s"]) for db, r in out.items()]
    table(
        f"staging: {PUTS:,} single puts, then {many:,} entries staged in one call",
        ["database", "puts/s", "stage-many entries/s"],
        rows,
    )
    return out
