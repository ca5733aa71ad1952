"""Eight processes put, commit and merge on shared branches of one repository on PostgreSQL.

The writers share two cache directories (four processes each) and one namespace. When they are
done, every invariant of :mod:`tests.stress.harness` must hold; then every write branch is
committed and merged into ``main``, which must hold the latest acknowledged content of every key.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from graveler.client import Graveler
from graveler.core.errors import NoChanges
from graveler.repository import Repository
from tests.stress.harness import REPO, Ledger, check_invariants, create_repository, spawn
from tests.stress.workload import WRITE_BRANCHES, Config

WRITERS = 8
TIMEOUT = 600


def run_writers(base: Path, url: str, ops: int, seed: int) -> Ledger:
    """Start WRITERS workload processes (two shared cache homes), wait, read their journals."""
    configs = [
        Config(
            home=str(base / f"home{w % 2}"),
            database_url=url,
            repo=REPO,
            worker=f"p{w}",
            seed=seed + w,
            journal=str(base / f"journal-{w}.jsonl"),
            max_ops=ops,
        )
        for w in range(WRITERS)
    ]
    procs = [spawn(cfg) for cfg in configs]
    for proc in procs:
        _, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, f"a writer failed (seed {seed}):\n{err[-3000:]}"
    ledger = Ledger()
    for cfg in configs:
        ledger.read(Path(cfg.journal))
    return ledger


def drain_into_main(repo: Repository) -> dict[str, str]:
    """Commit every write branch and merge it into main; returns main's path -> checksum."""
    for branch in WRITE_BRANCHES:
        with contextlib.suppress(NoChanges):
            repo.commit(branch, f"drain {branch}")
        with contextlib.suppress(NoChanges):
            repo.merge(branch, "main")
    return {e.path: e.checksum for e in repo.iter_objects("main")}


@pytest.mark.postgres
def test_eight_writers_on_shared_branches(tmp_path, pg_schema_url, level, figures):
    with Graveler(home=tmp_path / "home0", database_url=pg_schema_url) as gv:
        create_repository(gv, (tmp_path / "ns").as_uri())
    ledger = run_writers(tmp_path, pg_schema_url, level.stress_ops, figures.seed)
    area = "concurrent writers (8 processes, PostgreSQL)"
    with Graveler(home=tmp_path / "check", database_url=pg_schema_url) as gv:
        repo = gv.repository(REPO)
        verdict = check_invariants(repo, ledger)
        figures.add(area, operations=sum(ledger.counts.values()), data_lost=verdict.data_lost)
        verdict.assert_ok(f"seed {figures.seed}: ")
        main = drain_into_main(repo)
    missing = [path for (_, path), sha in ledger.latest.items() if main.get(path) != sha]
    assert not missing, f"main lacks the acknowledged content of {missing[:3]}"
    assert sum(ledger.counts.values()) == WRITERS * level.stress_ops
    assert all(ledger.counts[op] > 0 for op in ("put", "commit", "merge")), ledger.counts
    figures.add(area, keys_verified=verdict.keys_checked, **ledger.counts)
