"""``python -m benchmarks cli``: every-day CLI commands as whole processes, against
``python -c "import json"``.

The command list is fixed by issue 29 (not chosen after measuring): on a repository of 10,000
objects of 1 KiB (100 directories of 100) with a history of 12 commits of 10 changes,

* reads: ``fs stat``, ``fs ls`` of one directory, ``fs cat`` of a 1 KiB object, ``log
  --amount 10``, ``show``, ``branch list``, ``diff`` of two commits 10 changes apart;
* writes: ``fs upload`` of one file, ``commit`` of one staged change, ``merge`` of a
  one-commit branch (as a user runs it: by default, a fast-forward here), ``branch create``.

Each command is started as its own process (the installed ``graveler`` entry point, output
into a pipe, as a script sees it), in turn with the yardstick, ``RUNS`` times after
``WARMUP`` runs; its row is its median wall time, the yardstick's median, and their ratio
(targets: 6x for reads, 10x for writes), with the median CPU time (user + system) beside it:
CPU time says the same when the machine is shared, wall time includes the fsyncs of writes.
What a write needs first (a staged change, a branch with one commit) is prepared through the
Python API between runs, untimed.

Both commands run with Python's bytecode cache on (``PYTHONDONTWRITEBYTECODE`` removed, the
cache kept under the run's directory by ``PYTHONPYCACHEPREFIX``), as an installed package
runs; the warm-up runs fill it.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.lake import Context
from benchmarks.report import table
from graveler.client import Graveler
from graveler.repository import Repository

OBJECTS = 10_000
PER_DIRECTORY = 100
HISTORY = 12  # commits of CHANGES changes over the import (log --amount 10 has 10 to list)
CHANGES = 10
RUNS = 9
WARMUP = 2
TARGETS = {"read": 6.0, "write": 10.0}


@dataclass(frozen=True)
class Command:
    """One row: its name, kind (read / write), arguments (after ``graveler``) for run
    ``n``, and what to prepare through the API before run ``n`` (untimed)."""

    name: str
    kind: str
    args: Callable[[int], list[str]]
    prepare: Callable[[Repository, int], None] | None = None


def _path(i: int) -> str:
    return f"data/{i // PER_DIRECTORY:03d}/f{i:05d}.bin"


def _body(i: int, version: int = 0) -> bytes:
    return (b"%05d:%d:" % (i, version)).ljust(1024, b".")


def build(home: Path) -> None:
    """The repository ``lake``: OBJECTS objects of 1 KiB committed at once, then HISTORY
    commits of CHANGES changed objects each."""
    print(f"  [cli] writing {OBJECTS:,} objects of 1 KiB ...", flush=True)
    with Graveler(home=home) as gv:
        repo = gv.create_repository("lake")
        source = home / "source"
        for i in range(OBJECTS):
            file = source / _path(i)
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(_body(i))
        items = [(_path(i), source / _path(i)) for i in range(OBJECTS)]
        repo.upload_many("main", items)
        repo.commit("main", f"import {OBJECTS} objects")
        for n in range(1, HISTORY + 1):
            for i in range(CHANGES):
                repo.put("main", _path(n * 37 + i * 101), _body(i, n))
            repo.commit("main", f"change {n}", metadata={"step": str(n)})


def commands(work: Path) -> list[Command]:
    lake = "graveler://lake"
    one = work / "upload.bin"
    one.write_bytes(_body(0, 99))

    def stage_one(repo: Repository, n: int) -> None:
        repo.put("bench-commit", f"staged/{n}.bin", _body(n, 7))

    def one_commit_branch(repo: Repository, n: int) -> None:
        repo.create_branch(f"feature-{n}", "main")
        repo.put(f"feature-{n}", f"features/{n}.bin", _body(n, 8))
        repo.commit(f"feature-{n}", f"feature {n}")

    return [
        Command("fs stat", "read", lambda n: ["fs", "stat", f"{lake}/main/{_path(4242)}"]),
        Command("fs ls (one directory)", "read", lambda n: ["fs", "ls", f"{lake}/main/data/042/"]),
        Command("fs cat (1 KiB)", "read", lambda n: ["fs", "cat", f"{lake}/main/{_path(4242)}"]),
        Command("log --amount 10", "read", lambda n: ["log", f"{lake}/main", "--amount", "10"]),
        Command("show", "read", lambda n: ["show", f"{lake}/main"]),
        Command("branch list", "read", lambda n: ["branch", "list", lake]),
        Command("diff (10 changes)", "read", lambda n: ["diff", f"{lake}/main~1", f"{lake}/main"]),
        Command(
            "fs upload (one file)",
            "write",
            lambda n: ["fs", "upload", str(one), f"{lake}/bench-upload/up/{n}.bin"],
        ),
        Command(
            "commit (one change)",
            "write",
            lambda n: ["commit", f"{lake}/bench-commit", "-m", f"commit {n}"],
            stage_one,
        ),
        Command(
            "merge (one-commit branch)",
            "write",
            lambda n: ["merge", f"{lake}/feature-{n}", f"{lake}/main"],
            one_commit_branch,
        ),
        Command(
            "branch create",
            "write",
            lambda n: ["branch", "create", f"{lake}/new-{n}", "--source", f"{lake}/main"],
        ),
    ]


def environment(work: Path, home: Path) -> dict[str, str]:
    """The processes' environment: bytecode cache on, in the run's directory."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPYCACHEPREFIX=str(work / "pycache"),
        GRAVELER_HOME=str(home),
        GRAVELER_COMMITTER="bench",
    )
    env.pop("GRAVELER_DATABASE_URL", None)
    return env


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one process run to completion; fails on a non-zero exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(cmd: Command, repo: Repository, env: dict[str, str]) -> dict[str, Any]:
    exe = str(Path(sys.executable).parent / "graveler")
    yardstick = [sys.executable, "-c", "import json"]
    a_wall, a_cpu, b_wall, b_cpu, pairs = [], [], [], [], []
    for n in range(WARMUP + RUNS):
        if cmd.prepare is not None:
            cmd.prepare(repo, n)
        wall, cpu = _timed([exe, *cmd.args(n)], env)
        base_wall, base_cpu = _timed(yardstick, env)
        if n >= WARMUP:
            a_wall.append(wall)
            a_cpu.append(cpu)
            b_wall.append(base_wall)
            b_cpu.append(base_cpu)
            pairs.append(wall / base_wall)
    median, base = statistics.median(a_wall), statistics.median(b_wall)
    return {
        "kind": cmd.kind,
        "runs": RUNS,
        "median_s": median,
        "min_s": min(a_wall),
        "max_s": max(a_wall),
        "cpu_s": statistics.median(a_cpu),
        "yardstick_s": base,
        "yardstick_cpu_s": statistics.median(b_cpu),
        "ratio": median / base,
        "paired_ratio": statistics.median(pairs),
        "cpu_ratio": statistics.median(a_cpu) / statistics.median(b_cpu),
        "target": TARGETS[cmd.kind],
    }


def run(ctx: Context) -> dict[str, Any]:
    work = ctx.fresh_dir("cli")
    home = work / "home"
    build(home)
    env = environment(work, home)
    with Graveler(home=home) as gv:
        repo = gv.repository("lake")
        repo.create_branch("bench-upload", "main")
        repo.create_branch("bench-commit", "main")
        rows = {cmd.name: measure(cmd, repo, env) for cmd in commands(work)}
    _print(rows)
    return {"objects": OBJECTS, "commands": rows}


def _print(rows: dict[str, dict[str, Any]]) -> None:
    ms = 1000
    table(
        f"CLI commands on {OBJECTS:,} objects, whole processes, median of {RUNS} "
        '(ratio: ÷ python -c "import json")',
        ["command", "median ms", "min-max ms", "cpu ms", "json ms", "ratio", "cpu ratio", "target"],
        [
            (
                name,
                r["median_s"] * ms,
                f"{r['min_s'] * ms:.0f}-{r['max_s'] * ms:.0f}",
                r["cpu_s"] * ms,
                r["yardstick_s"] * ms,
                f"{r['ratio']:.1f}x",
                f"{r['cpu_ratio']:.1f}x",
                f"<= {r['target']:.0f}x",
            )
            for name, r in rows.items()
        ],
    )
