"""Suite ``import``: a data set's first import, and then a one-file change, against git and DVC.

The same 10,000 local files of 100 bytes go in every tool, bytes included:

* import (best of 3, each into a fresh repository): graveler ``upload_many`` + ``commit``
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


def best_import(prepare: Callable[[Path], Callable[[], Any]], work: Path) -> float:
    """The best of IMPORTS timed imports, each into a fresh ``work`` made by ``prepare``
    (which returns the import to time); the last one's result is left in ``work``."""
    best = float("inf")
    for attempt in range(IMPORTS):
        # A directory per attempt: git may still be writing into an earlier one (auto gc).
        target = work if attempt == IMPORTS - 1 else work.with_name(f"{work.name}.{attempt}")
        best = min(best, timed(prepare(target)))
    return best


def git_cli(src: Path, work: Path, changes: list[str]) -> dict[str, float]:
    def prepare(work: Path) -> Callable[[], None]:
        shutil.copytree(src, work)
        sh("git init -q", work)
        return lambda: sh("git add -A && git commit -q -m import", work)

    imported = best_import(prepare, work)
    times = []
    for t, rel in enumerate(changes):
        _changed(work, rel, t)
        times.append(timed(lambda rel=rel: sh(f"git add {rel} && git commit -q -m change", work)))
    return {"import": imported, "commit_1": statistics.median(times)}


def pygit2_side(src: Path, work: Path, changes: list[str]) -> dict[str, float] | None:
    if importlib.util.find_spec("pygit2") is None:
        return None
    import pygit2

    sig = pygit2.Signature("bench", "bench@localhost")
    repos: list[Any] = []

    def prepare(work: Path) -> Callable[[], None]:
        shutil.copytree(src, work)
        repos[:] = [pygit2.init_repository(str(work))]
        return lambda: commit("import", None)

    def commit(message: str, add: list[str] | None) -> None:
        repo = repos[0]
        index = repo.index
        if add is None:
            index.add_all()
        else:
            for rel in add:
                index.add(rel)
        index.write()
        parents = [] if repo.head_is_unborn else [repo.head.target]
        repo.create_commit("HEAD", sig, sig, message, index.write_tree(), parents)

    imported = best_import(prepare, work)
    times = []
    for t, rel in enumerate(changes):
        _changed(work, rel, t)
        times.append(timed(lambda rel=rel: commit("change", [rel])))
    return {"import": imported, "commit_1": statistics.median(times)}


#: Where ``make dvc-env`` installs DVC: its own environment, because with Airflow's
#: constraints pip can only resolve DVC 0.62 (2019).
DVC_ENV = Path(__file__).resolve().parent.parent / ".venv-dvc" / "bin"


def dvc_command() -> str | None:
    """The ``dvc`` executable: ``.venv-dvc`` (``make dvc-env``), else the one on PATH."""
    own = DVC_ENV / "dvc"
    return str(own) if own.exists() else shutil.which("dvc")


def dvc_side(src: Path, work: Path) -> dict[str, float] | None:
    dvc = dvc_command()
    if dvc is None:
        return None
    env = {**GIT_ENV, "PATH": f"{Path(dvc).parent}{os.pathsep}{GIT_ENV.get('PATH', '')}"}

    def prepare(work: Path) -> Callable[[], None]:
        shutil.copytree(src, work / "data")
        sh("git init -q && dvc init -q", work, env)
        cmd = "dvc add -q data && git add data.dvc .gitignore && git commit -q -m import"
        return lambda: sh(cmd, work, env)

    return {"import": best_import(prepare, work)}


def graveler_api(src: Path, rels: list[str], home: Path, changes: list[str]) -> dict[str, float]:
    clients: list[Graveler] = []

    def prepare(home: Path) -> Callable[[], None]:
        for old in clients:
            old.close()
        gv = Graveler(home=home)
        clients[:] = [gv]
        repo = gv.create_repository("imports", (home / "ns").as_uri())

        def load() -> None:
            repo.upload_many("main", [(rel, src / rel) for rel in rels])
            repo.commit("main", "import")

        return load

    imported = best_import(prepare, home)
    with clients[0] as gv:
        repo = gv.repository("imports")
        times = []
        for t, rel in enumerate(changes):

            def one(rel: str = rel, t: int = t) -> None:
                repo.put("main", rel, f"changed {t}\n".encode())
                repo.commit("main", "change")

            times.append(timed(one))
    return {"import": imported, "commit_1": statistics.median(times)}


def graveler_cli(src: Path, home: Path, changes: list[str]) -> dict[str, float]:
    exe = str(Path(sys.executable).parent / "graveler")
    env = {**os.environ, "GRAVELER_HOME": str(home)}
    env.pop("GRAVELER_DATABASE_URL", None)
    sh(f"{exe} repo create graveler://cli {(home / 'ns').as_uri()}", src, env)
    commit = f"{exe} commit graveler://cli/main -m"
    load = f"{exe} fs upload --recursive . graveler://cli/main/ && {commit} import"
    imported = timed(lambda: sh(load, src, env))
    times = []
    for t, rel in enumerate(changes):
        one = home / "one.csv"
        one.write_bytes(f"changed {t}\n".encode())
        cmd = f"{exe} fs upload {one} graveler://cli/main/{rel} && {commit} change"
        times.append(timed(lambda cmd=cmd: sh(cmd, src, env)))
    return {"import": imported, "commit_1": statistics.median(times)}


def run(ctx: Context) -> dict[str, Any]:
    base = ctx.fresh_dir("import")
    src = base / "src"
    print(f"  [import] writing {FILES:,} local files of {SIZE} bytes ...", flush=True)
    rels = make_files(src, FILES)
    changes = [rels[(FILES * (t + 1)) // (CHANGES + 1)] for t in range(CHANGES)]
    out: dict[str, Any] = {
        "files": FILES,
        "git": git_cli(src, base / "git", changes),
        "pygit2": pygit2_side(src, base / "pygit2", changes),
        "dvc": dvc_side(src, base / "dvc"),
        "graveler": graveler_api(src, rels, base / "graveler", changes),
        "graveler_cli": graveler_cli(src, base / "graveler-cli", changes),
    }
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
