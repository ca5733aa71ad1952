"""Suite ``import``: a data set's first import, and then a one-file change, against git and DVC.

The same 10,000 local files of 100 bytes go in every tool, bytes included:

* import (best of 3, each into a fresh repository; the tools take turns, so a change of the
  machine's load during the run falls on all of them): graveler ``upload_many`` + ``commit``
  in-process and ``graveler fs upload --recursive``
  + ``graveler commit`` as processes; ``git add -A && git commit`` (CLI, one shell); pygit2
  (libgit2 in-process: index ``add_all``, ``write_tree``, ``create_commit``); DVC (``dvc add`` +
  ``git commit`` of its pointer file) when the ``dvc`` command is installed.
* small commit: one changed file on the 10,000-file repository: graveler ``put`` + ``commit``
  (in-process, and as two CLI processes); ``git add FILE && git commit`` (CLI); pygit2 (index
  ``add``, ``write_tree``, ``create_commit``). Median of 5.

git writes loose objects without fsync (its default ``core.fsync``); graveler fsyncs every
object and tree file before it is recorded. Every timed step starts after ``os.sync()``, so
no tool flushes another's pending writes. pygit2 is optional (extra ``bench``); DVC
runs from ``.venv-dvc`` (``make dvc-env``) or PATH. Either is reported as not installed when
missing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
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

FILES = 10_000
SIZE = 100
CHANGES = 5
IMPORTS = 3  # each tool imports this many times (fresh each time); the best one counts
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def timed(fn: Callable[[], Any]) -> float:
    """Seconds ``fn`` takes, starting with nothing dirty in the page cache: with ext4's
    ordered mode an fsync also writes out other files' pending data, so a tool that fsyncs
    would otherwise pay for the unsynced writes of the tool measured before it."""
    os.sync()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def make_files(root: Path, n: int) -> list[str]:
    """``n`` files of SIZE bytes in 100 directories; their relative paths."""
    rels = [f"d{i % 100:02d}/part-{i:05d}.csv" for i in range(n)]
    for i, rel in enumerate(rels):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"{i:09d},".encode().ljust(SIZE - 1, b"x") + b"\n")
    return rels


def sh(cmd: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    subprocess.run(cmd, shell=True, cwd=cwd, env=env or GIT_ENV, check=True, capture_output=True)


def _changed(root: Path, rel: str, t: int) -> None:
    (root / rel).write_bytes(f"changed {t}\n".encode())


@dataclass
class Side:
    """One tool: ``prepare(work)`` sets up an import into the fresh directory ``work`` and
    returns it, to be timed; ``change(work, rel, t)`` returns the timed one-file commit of
    change ``t`` to ``rel`` in the last import (None: the tool is timed on imports only)."""

    prepare: Callable[[Path], Callable[[], Any]]
    change: Callable[[Path, str, int], Callable[[], Any]] | None = None


def compare(sides: dict[str, Side], base: Path, changes: list[str]) -> dict[str, dict[str, float]]:
    """Time every side's import IMPORTS times and its one-file commit once per change, the
    sides taking turns (git, pygit2, DVC, graveler, then git again...), so that a change in
    the machine's load or disk state during the run falls on every tool alike. An import is
    the best of its attempts (each into a fresh directory: git may still be writing into an
    earlier one, auto gc), a commit the median of its changes."""
    imports: dict[str, list[float]] = {name: [] for name in sides}
    work = {name: base / name for name in sides}
    for attempt in range(IMPORTS):
        for name, side in sides.items():
            last = attempt == IMPORTS - 1
            target = work[name] if last else work[name].with_name(f"{name}.{attempt}")
            imports[name].append(timed(side.prepare(target)))
    commits: dict[str, list[float]] = {name: [] for name, s in sides.items() if s.change}
    for t, rel in enumerate(changes):
        for name in commits:
            change = sides[name].change
            assert change is not None
            commits[name].append(timed(change(work[name], rel, t)))
    out = {name: {"import": min(times)} for name, times in imports.items()}
    for name, times in commits.items():
        out[name]["commit_1"] = statistics.median(times)
    return out


def git_cli(src: Path) -> Side:
    def prepare(work: Path) -> Callable[[], None]:
        shutil.copytree(src, work)
        sh("git init -q", work)
        return lambda: sh("git add -A && git commit -q -m import", work)

    def change(work: Path, rel: str, t: int) -> Callable[[], None]:
        _changed(work, rel, t)
        return lambda: sh(f"git add {rel} && git commit -q -m change", work)

    return Side(prepare, change)


def pygit2_side(src: Path) -> Side | None:
    if importlib.util.find_spec("pygit2") is None:
        return None
    import pygit2

    sig = pygit2.Signature("bench", "bench@localhost")
    repos: dict[Path, Any] = {}

    def prepare(work: Path) -> Callable[[], None]:
        shutil.copytree(src, work)
        repos[work] = pygit2.init_repository(str(work))
        return lambda: commit(work, "import", None)

    def commit(work: Path, message: str, add: list[str] | None) -> None:
        repo = repos[work]
        index = repo.index
        if add is None:
            index.add_all()
        else:
            for rel in add:
                index.add(rel)
        index.write()
        parents = [] if repo.head_is_unborn else [repo.head.target]
        repo.create_commit("HEAD", sig, sig, message, index.write_tree(), parents)

    def change(work: Path, rel: str, t: int) -> Callable[[], None]:
        _changed(work, rel, t)
        return lambda: commit(work, "change", [rel])

    return Side(prepare, change)


#: Where ``make dvc-env`` installs DVC: its own environment, because with Airflow's
#: constraints pip can only resolve DVC 0.62 (2019).
DVC_ENV = Path(__file__).resolve().parent.parent / ".venv-dvc" / "bin"


def dvc_command() -> str | None:
    """The ``dvc`` executable: ``.venv-dvc`` (``make dvc-env``), else the one on PATH."""
    own = DVC_ENV / "dvc"
    return str(own) if own.exists() else shutil.which("dvc")


def dvc_side(src: Path) -> Side | None:
    dvc = dvc_command()
    if dvc is None:
        return None
    env = {**GIT_ENV, "PATH": f"{Path(dvc).parent}{os.pathsep}{GIT_ENV.get('PATH', '')}"}

    def prepare(work: Path) -> Callable[[], None]:
        shutil.copytree(src, work / "data")
        sh("git init -q && dvc init -q", work, env)
        cmd = "dvc add -q data && git add data.dvc .gitignore && git commit -q -m import"
        return lambda: sh(cmd, work, env)

    return Side(prepare)


def graveler_api(src: Path, rels: list[str]) -> Side:
    clients: dict[Path, Graveler] = {}

    def prepare(home: Path) -> Callable[[], None]:
        gv = clients[home] = Graveler(home=home)
        repo = gv.create_repository("imports", (home / "ns").as_uri())

        def load() -> None:
            repo.upload_many("main", [(rel, src / rel) for rel in rels])
            repo.commit("main", "import")

        return load

    def change(home: Path, rel: str, t: int) -> Callable[[], None]:
        repo = clients[home].repository("imports")

        def one() -> None:
            repo.put("main", rel, f"changed {t}\n".encode())
            repo.commit("main", "change")

        return one

    return Side(prepare, change)


def graveler_cli(src: Path) -> Side:
    exe = str(Path(sys.executable).parent / "graveler")

    def env(home: Path) -> dict[str, str]:
        out = {**os.environ, "GRAVELER_HOME": str(home)}
        out.pop("GRAVELER_DATABASE_URL", None)
        return out

    def prepare(home: Path) -> Callable[[], None]:
        home.mkdir(parents=True)
        sh(f"{exe} repo create graveler://cli {(home / 'ns').as_uri()}", src, env(home))
        commit = f"{exe} commit graveler://cli/main -m import"
        load = f"{exe} fs upload --recursive . graveler://cli/main/ && {commit}"
        return lambda: sh(load, src, env(home))

    def change(home: Path, rel: str, t: int) -> Callable[[], None]:
        one = home / "one.csv"
        one.write_bytes(f"changed {t}\n".encode())
        commit = f"{exe} commit graveler://cli/main -m change"
        cmd = f"{exe} fs upload {one} graveler://cli/main/{rel} && {commit}"
        return lambda: sh(cmd, src, env(home))

    return Side(prepare, change)


def run(ctx: Context) -> dict[str, Any]:
    base = ctx.fresh_dir("import")
    src = base / "src"
    print(f"  [import] writing {FILES:,} local files of {SIZE} bytes ...", flush=True)
    rels = make_files(src, FILES)
    changes = [rels[(FILES * (t + 1)) // (CHANGES + 1)] for t in range(CHANGES)]
    candidates: dict[str, Side | None] = {
        "git": git_cli(src),
        "pygit2": pygit2_side(src),
        "dvc": dvc_side(src),
        "graveler": graveler_api(src, rels),
        "graveler_cli": graveler_cli(src),
    }
    sides = {name: side for name, side in candidates.items() if side is not None}
    times = compare(sides, base, changes)
    out: dict[str, Any] = {"files": FILES, **{name: times.get(name) for name in candidates}}
    _print(out)
    return out


def _print(r: dict[str, Any]) -> None:
    git = r["git"]
    rows = []
    for name, label in (
        ("graveler", "graveler (Python API)"),
        ("graveler_cli", "graveler (CLI processes)"),
        ("git", "git (CLI)"),
        ("pygit2", "git via pygit2 (in-process)"),
        ("dvc", "DVC (dvc add + git commit)"),
    ):
        got = r[name]
        if got is None:
            rows.append((label, "not installed", "", "not installed", ""))
            continue
        c1 = got.get("commit_1")
        rows.append(
            (
                label,
                got["import"],
                got["import"] / git["import"],
                "" if c1 is None else c1 * 1000,
                "" if c1 is None else c1 / git["commit_1"],
            )
        )
    table(
        f"import {r['files']:,} files of {SIZE} bytes, then commit 1 changed file (median of "
        f"{CHANGES})",
        ["tool", "import s", "/ git", "commit-1 ms", "/ git"],
        rows,
    )
