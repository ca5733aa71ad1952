"""Suite ``git``: the same logical workload with git plumbing on the same machine, same run.

git gets every advantage it can: one shared blob, an index built with one
``update-index --index-info`` call, commits made with ``update-index`` + ``write-tree`` +
``commit-tree`` (no working tree, no hooks). Workload on a tree of N paths: commit one changed
path, diff two commits that differ in 10 paths, and log 20 commits. graveler does the same on
its lake (stage one entry + commit; diff; first-parent log). The table reports graveler / git
time ratios (below 1: graveler is faster).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from benchmarks.lake import Context, lake_entry, lake_path, median_time, timed
from benchmarks.report import table

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


class Git:
    def __init__(self, root: Path) -> None:
        self.root = root
        self("init", "-q", "-b", "main")

    def __call__(self, *args: str, stdin: str | None = None) -> str:
        proc = subprocess.run(
            ["git", "-C", str(self.root), *args],
            input=stdin,
            text=True,
            capture_output=True,
            env=ENV,
            check=True,
        )
        return proc.stdout.strip()

    def blob(self, content: str) -> str:
        return self("hash-object", "-w", "--stdin", stdin=content)

    def commit(self, parent: str | None, message: str) -> str:
        tree = self("write-tree")
        args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
        sha = self(*args)
        self("update-ref", "refs/heads/main", sha)
        return sha

    def change(self, paths: list[str], content: str) -> None:
        blob = self.blob(content)
        self("update-index", "--index-info", stdin="".join(f"100644 {blob}\t{p}\n" for p in paths))


def git_side(n: int, root: Path) -> dict[str, float]:
    git = Git(root)
    blob = git.blob("x")
    lines = "".join(f"100644 {blob}\t{lake_path(i)}\n" for i in range(n))
    build = timed(lambda: git("update-index", "--add", "--index-info", stdin=lines))
    head = git.commit(None, "import")
    times = []
    for t in range(5):

        def one(t: int = t) -> None:
            nonlocal head
            git.change([lake_path((n * (t + 1)) // 6)], f"v{t}")
            head = git.commit(head, "one change")

        times.append(timed(one))
    base = head
    git.change([lake_path(i) for i in range(0, n, max(1, n // 10))][:10], "ten")
    head = git.commit(head, "ten changes")
    diff = median_time(lambda: git("diff-tree", "-r", "--name-status", base, head), repeat=3)
    for t in range(20):  # log cost does not depend on tree contents: reuse the tree
        head = git.commit(head, f"log {t}")
    log = median_time(lambda: git("log", "--format=%H", "-n", "20", "main"), repeat=3)
    return {"build": build, "commit_1": sorted(times)[2], "diff_10": diff, "log_20": log}


def graveler_side(ctx: Context) -> dict[str, float]:
    lake = ctx.lake(ctx.n)
    with lake.client(ctx.fresh_dir("gitcmp")) as gv:
        repo = gv.repository("lake")
        repo.create_branch("gitcmp", lake.commit_id)
        times = []
        for t in range(5):

            def one(t: int = t) -> None:  # stage + commit, as git's side hashes + updates index
                path = lake_path((ctx.n * (t + 1)) // 6)
                repo.stage_entries("gitcmp", [lake_entry(path, t + 1)])
                repo.commit("gitcmp", "one change")

            times.append(timed(one))
        base = repo.resolve("gitcmp").commit.id
        idx = list(range(0, ctx.n, max(1, ctx.n // 10)))[:10]
        head = repo.import_entries("gitcmp", [lake_entry(lake_path(i), 9) for i in idx], "ten").id
        diff = median_time(lambda: list(repo.diff(base, head)), repeat=3)
        for t in range(20):
            repo.import_entries("gitcmp", [lake_entry(lake_path(t), 100 + t)], f"log {t}")
        log = median_time(lambda: list(repo.log("gitcmp", amount=20)), repeat=3)
    return {"commit_1": sorted(times)[2], "diff_10": diff, "log_20": log}


def run(ctx: Context) -> dict[str, Any]:
    print(f"  [git] building a git index of {ctx.n:,} paths ...", flush=True)
    git = git_side(ctx.n, ctx.fresh_dir("git"))
    grav = graveler_side(ctx)
    rows = [
        (
            op,
            grav[key] * 1000,
            git[key] * 1000,
            grav[key] / git[key],
            f"{git[key] / grav[key]:.1f}x",
        )
        for op, key in (
            ("commit 1 change", "commit_1"),
            ("diff 10 changes", "diff_10"),
            ("log 20 commits", "log_20"),
        )
    ]
    table(
        f"graveler vs git plumbing on {ctx.n:,} paths (git index built in {git['build']:.1f} s)",
        ["operation", "graveler ms", "git ms", "graveler/git", "graveler speed-up"],
        rows,
    )
    return {"n": ctx.n, "git": git, "graveler": grav}
