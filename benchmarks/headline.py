"""The headline table (README and docs/performance.md): the targets of the hot paths, as ratios
measured in one run of the ``hotpaths`` and ``import`` suites.

``python -m benchmarks hotpaths import --markdown FILE`` writes it. Every row says what its
figures include and what the target is. Ratios are of wall-clock times; for the in-process
reads the ratio of CPU times is shown beside it (on a busy machine it is the steadier one).
"""

from __future__ import annotations

from typing import Any

#: what, includes, wall-clock ratio, CPU-time ratio (reads only), target ("<= 2" / ">= 3")
Row = tuple[str, str, float, float | None, str]


def _ratio(times: dict[str, float], top: str, bottom: str) -> float:
    return times[top] / times[bottom]


def read_rows(wall: dict[str, float], cpu: dict[str, float]) -> list[Row]:
    out: list[Row] = []
    for call in ("stat", "exists", "get", "list"):
        what = f"`{call}` by branch / by commit ID" + (" (a page)" if call == "list" else "")
        for case, includes, target in (
            ("branch", "clean branch, SQLite, warm cache", "<= 2"),
            ("staged", "100 staged changes on the branch", "<= 3"),
        ):
            top, bottom = f"{call}_{case}", f"{call}_commit"
            out.append(
                (what, includes, _ratio(wall, top, bottom), _ratio(cpu, top, bottom), target)
            )
    out.append(
        (
            "`stat` by commit ID / `CommittedManager.get`",
            "ref resolution, key check, decoded entry",
            _ratio(wall, "stat_commit", "engine_get"),
            _ratio(cpu, "stat_commit", "engine_get"),
            "<= 2",
        )
    )
    out.append(
        (
            "`stat_many` speed-up per key over `stat`",
            "the same keys, by commit ID",
            _ratio(wall, "stat_commit", "stat_many"),
            _ratio(cpu, "stat_commit", "stat_many"),
            ">= 3",
        )
    )
    return out


def rows(hot: dict[str, Any], imp: dict[str, Any]) -> list[Row]:
    puts, cli = hot["puts"], hot["cli"]
    grav, git = imp["graveler"], imp["git"]
    return [
        *read_rows(hot["reads"], hot["reads_cpu"]),
        (
            "single `put` of 100 B: rate / rate at a84461e",
            "bytes durable, then staged (SQLite)",
            puts["legacy_put"] / puts["put"],
            None,
            ">= 3",
        ),
        (
            "import 10,000 files of 100 B / `git add -A && git commit`",
            "read, write, fsync, stage, commit (Python API)",
            grav["import"] / git["import"],
            None,
            "<= 1",
        ),
        (
            "put + commit of 1 file on 10,000 / `git add F && git commit`",
            "median of 5 (Python API; git CLI)",
            grav["commit_1"] / git["commit_1"],
            None,
            "<= 0.5",
        ),
        (
            '`graveler repo list` / `python -c "import json"`',
            "whole processes, same interpreter",
            cli["repo_list"] / cli["python_import_json"],
            None,
            "<= 4",
        ),
    ]


def markdown(hot: dict[str, Any], imp: dict[str, Any]) -> str:
    """The table in Markdown, with a check mark where the target holds (wall clock)."""
    lines = [
        "| hot path | includes | ratio | CPU ratio | target | |",
        "|---|---|---:|---:|---:|:-:|",
    ]
    for what, includes, ratio, cpu, target in rows(hot, imp):
        mark = "✓" if holds(ratio, target) else "✗"
        shown = "" if cpu is None else f"{cpu:.2f}"
        lines.append(f"| {what} | {includes} | {ratio:.2f} | {shown} | {target} | {mark} |")
    return "\n".join(lines) + "\n"


def holds(ratio: float, target: str) -> bool:
    op, bound = target.split()
    return ratio <= float(bound) if op == "<=" else ratio >= float(bound)
