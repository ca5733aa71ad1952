"""Command line of the benchmark harness.

python -m benchmarks committed [--sizes 10k,1m] [--json PATH]
python -m benchmarks staged-commit [--sizes 1m]
python -m benchmarks spark [--sizes 1m]
"""

from __future__ import annotations

import argparse
import json
import sys

from benchmarks import committed, spark, staged_commit

SUITES = {
    "committed": committed.run,
    "staged-commit": staged_commit.run,
    "spark": spark.run,
}


def parse_size(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("km")) * mult)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("suites", nargs="*", default=["committed"], choices=sorted(SUITES))
    parser.add_argument("--sizes", default="10k,1m", help="tree sizes, e.g. 10k,1m")
    parser.add_argument("--json", metavar="PATH", help="also write results as JSON")
    args = parser.parse_args(argv)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s]
    results = {}
    for name in args.suites:
        results[name] = SUITES[name](sizes)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
