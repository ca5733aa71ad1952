"""The headline table (README and docs/performance.md): the targets of the hot paths, as ratios
measured in one run of the ``hotpaths`` and ``import`` suites.

``python -m benchmarks hotpaths import --markdown FILE`` writes it; every row says what its
figures include and what the target is.
"""

from __future__ import annotations

from typing import Any

Row = tuple[str, str, float, str]  # what, includes, ratio, target ("<= 2" / ">= 3")


def rows(hot: dict[str, Any], imp: dict[str, Any]) -> list[Row]:
    r, p, c = hot["reads"], hot["puts"], hot["cli"]
    out: list[Row] = []
    for call in ("stat", "exists", "get", "list"):
        what = f"`{call}` by branch / by commit ID" + (
            " (a page of up to 1,000)" * (call == "list")
        )
        out.append(
            (
                what,
                "clean branch; SQLite; warm cache",
                r[f"{call}_branch"] / r[f"{call}_commit"],
                "<= 2",
            )
        )
        out.append(
            (
                what,
                f"{100} staged changes on the branch",
                r[f"{call}_staged"] / r[f"{call}_commit"],
                "<= 3",
            )
        )
    out += [
        (
            "`stat` by commit ID / `CommittedManager.get`",
            "ref resolution, key check, entry decode",
            r["stat_commit"] / r["engine_get"],
            "<= 2",
        ),
        (
            "`stat_many` speed-up per key over `stat`",
            "same keys, by commit ID",
            r["stat_commit"] / r["stat_many"],
            ">= 3",
        ),
        (
            "single `put` of 100 B, rate / rate at a84461e",
            "bytes durable, then staged; SQLite",
            p["legacy_put"] / p["put"],
            ">= 3",
        ),
        (
            "import 10,000 files of 100 B / `git add -A && git commit`",
            "bytes read, written, fsynced, staged, committed",
            imp["graveler"]["import"] / imp["git"]["import"],
            "<= 1",
        ),
        (
            "put + commit of 1 file on 10,000 / `git add F && git commit`",
            "median of 5; git as two processes",
            imp["graveler"]["commit_1"] / imp["git"]["commit_1"],
            "<= 0.5",
        ),
        (
            '`graveler repo list` / `python -c "import json"`',
            "whole processes, same interpreter",
            c["repo_list"] / c["python_import_json"],
            "<= 4",
        ),
    ]
    return out


def markdown(hot: dict[str, Any], imp: dict[str, Any]) -> str:
    """The table in Markdown, with a check mark where the target holds."""
    lines = ["| hot path | includes | ratio | target | |", "|---|---|---:|---:|:-:|"]
    for what, includes, ratio, target in rows(hot, imp):
        mark = "✓" if holds(ratio, target) else "✗"
        lines.append(f"| {what} | {includes} | {ratio:.2f} | {target} | {mark} |")
    return "\n".join(lines) + "\n"


def holds(ratio: float, target: str) -> bool:
    op, bound = target.split()
    return ratio <= float(bound) if op == "<=" else ratio >= float(bound)
