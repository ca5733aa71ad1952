"""The benchmark harness.

    python -m benchmarks [SUITE ...] [--scale 10k|100k|1m|10m] [--json PATH] [--plot DIR]

Without suites it runs hotpaths, import, lookups, commit, diff, reuse, staging, git and
scaling at the chosen scale (default 10k). ``gateway`` (named only) times ``graveler serve``'s
S3 gateway against the object store and a moto server; ``cli`` (named only) times every-day
commands as whole processes on a fixed 10,000-object repository (:mod:`benchmarks.cli`);
``iceberg`` (named only) the Iceberg REST catalog against pyiceberg's SqlCatalog, and the
logical merge of Iceberg tables; ``lakefs_api`` (named only) lakeFS's REST API on ``graveler
serve`` beside the same operations in-process and lakeFS 1.84's figures.
``hotpaths`` and ``import`` give the headline table (``--markdown FILE`` writes it; see
:mod:`benchmarks.headline`). ``committed``, ``ranges`` and ``staged-commit`` are the
engine-level suites, ``fsck`` times integrity checks; ``fsspec``,
``dagster-io``, ``spark`` and ``spark-tables`` measure those integrations (they take
``--sizes``; Dagster and PySpark are imported only when their suite runs). ``ui`` times the
web UI's pages (compare, object browser, commit) in-process, by default on 1M objects.
``delta-merge`` times a Delta table's logical merge of 10 versions into tables of 1,000 and
100,000 versions, beside the file-level merge.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import (
    commit,
    committed,
    diffmerge,
    fsck,
    fsspec_io,
    gitcmp,
    headline,
    hotpaths,
    importcmp,
    lookups,
    ranges,
    reuse,
    scaling,
    staged_commit,
    staging,
)
from benchmarks.lake import SCALES, Context
from benchmarks.plots import draw

SUITES: dict[str, Callable[[Context], Any]] = {
    "hotpaths": hotpaths.run,
    "import": importcmp.run,
    "lookups": lookups.run,
    "commit": commit.run,
    "diff": diffmerge.run,
    "reuse": reuse.run,
    "staging": staging.run,
    "git": gitcmp.run,
    "scaling": scaling.run,
}
ENGINE_SUITES: dict[str, Callable[[list[int]], Any]] = {
    "committed": committed.run,
    "ranges": ranges.run,
    "staged-commit": staged_commit.run,
    "fsspec": fsspec_io.run,
    "fsck": fsck.run,
    "dagster-io": lambda sizes: importlib.import_module("benchmarks.dagster_io").run(sizes),
    "spark": lambda sizes: importlib.import_module("benchmarks.spark").run(sizes),
    "spark-read": lambda sizes: importlib.import_module("benchmarks.spark").read_ab(sizes),
    "spark-tables": lambda sizes: importlib.import_module("benchmarks.spark_tables").run(sizes),
    "ui": lambda sizes: importlib.import_module("benchmarks.uipages").run(sizes),
    "delta-merge": lambda sizes: importlib.import_module("benchmarks.delta_merge").run(sizes),
}
#: Suites run on demand only (not in the default list): they start servers.
ON_DEMAND: dict[str, Callable[[Context], Any]] = {
    "gateway": lambda ctx: importlib.import_module("benchmarks.gateway").run(ctx),
    "cli": lambda ctx: importlib.import_module("benchmarks.cli").run(ctx),
    "iceberg": lambda ctx: importlib.import_module("benchmarks.iceberg").run(ctx),
    "lakefs_api": lambda ctx: importlib.import_module("benchmarks.lakefs_api").run(ctx),
}
#: Engine suites whose default sizes are not ``10k,<scale>``.
DEFAULT_SIZES = {"ui": "1m", "delta-merge": "1k,100k"}


def parse_size(text: str) -> int:
    text = text.strip().lower()
    if text in SCALES:
        return SCALES[text]
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("km")) * mult)


def engine_sizes(suite: str, args: argparse.Namespace) -> list[int]:
    """The sizes an engine suite runs at: ``--sizes``, else its default, else 10k and the
    scale; sorted, without repeats."""
    given = args.sizes or DEFAULT_SIZES.get(suite) or f"10k,{args.scale}"
    return sorted({parse_size(s) for s in given.split(",")})


def machine() -> dict[str, Any]:
    import os

    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor() or "unknown",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "suites",
        nargs="*",
        metavar="SUITE",
        help="any of: " + ", ".join(sorted(SUITES | ENGINE_SUITES | ON_DEMAND)),
    )
    parser.add_argument("--scale", default="10k", choices=sorted(SCALES, key=SCALES.get))
    parser.add_argument("--sizes", default=None, help="engine suites: sizes, e.g. 10k,1m")
    parser.add_argument("--json", metavar="PATH", help="write all results as JSON")
    parser.add_argument("--plot", metavar="DIR", help="write PNG plots into DIR")
    parser.add_argument(
        "--markdown", metavar="PATH", help="write the headline table (needs hotpaths, import)"
    )
    parser.add_argument("--postgres-url", default=None, help="PostgreSQL for the staging suite")
    parser.add_argument(
        "--dry-run", action="store_true", help="check the arguments, print the plan, run nothing"
    )
    args = parser.parse_args(argv)
    suites = args.suites or list(SUITES)
    unknown = [
        s for s in suites if s not in SUITES and s not in ENGINE_SUITES and s not in ON_DEMAND
    ]
    if unknown:
        parser.error(f"unknown suite(s) {', '.join(unknown)}")
    if args.dry_run:
        plan = {s: engine_sizes(s, args) for s in suites if s in ENGINE_SUITES}
        print(f"would run {', '.join(suites)} at scale {args.scale} (engine sizes {plan})")
        return 0
    n = SCALES[args.scale]
    results: dict[str, Any] = {"scale": args.scale, "machine": machine(), "suites": {}}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="graveler-bench-") as tmp:
        ctx = Context(n=n, workdir=Path(tmp), postgres_url=args.postgres_url)
        for name in suites:
            if name in ENGINE_SUITES:
                sizes = engine_sizes(name, args)
                shown = ", ".join(f"{size:,}" for size in sizes)
                print(f"\n=== {name} (sizes {shown}) ===", flush=True)
                results["suites"][name] = ENGINE_SUITES[name](sizes)
            else:
                print(f"\n=== {name} ({args.scale}) ===  [{machine_state()}]", flush=True)
                results["suites"][name] = {**SUITES, **ON_DEMAND}[name](ctx)
    results["seconds"] = time.perf_counter() - started
    print(f"\nall suites finished in {results['seconds']:.0f} s")
    if args.plot:
        for path in draw(results["suites"], Path(args.plot)):
            print(f"plot: {path}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    _headline(results["suites"], args.markdown)
    return 0


def machine_state() -> str:
    """The load average and, on Linux, the share of the last 10 / 60 s in which some task
    waited on I/O (pressure stall information): file-creating and fsyncing suites slow down
    with it, whatever the tool, so a run's I/O-bound figures say most when it is near 0."""
    state = f"load {os.getloadavg()[0]:.2f}"
    try:
        some = Path("/proc/pressure/io").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return state
    fields = dict(part.split("=", 1) for part in some[1:] if "=" in part)
    return f"{state}, I/O pressure {fields.get('avg10', '?')}% / {fields.get('avg60', '?')}%"


def _headline(suites: dict[str, Any], path: str | None) -> None:
    """Print the headline table when its suites ran (and write it to ``path``)."""
    if "hotpaths" not in suites or "import" not in suites:
        return
    text = headline.markdown(suites["hotpaths"], suites["import"])
    print("\nheadline (ratios of this run):\n" + text)
    if path:
        Path(path).write_text(text)


if __name__ == "__main__":
    sys.exit(main())
