"""Crash safety: writer processes are SIGKILLed at random points during put, commit and merge.

Each trial starts a workload process on the same repository (so every trial also recovers from
the state the previous kill left) and kills it one of four ways, in turn:

* ``sql``: before its n-th SQL statement, so inside refs and staging transactions;
* ``store.put``: right after its n-th object or tree file reached the store, before the write
  was recorded anywhere;
* ``data.read``: while an object's bytes are streamed to the store (a torn temporary file);
* ``async``: from the outside, after a random delay.

After every kill the invariants of :mod:`tests.stress.harness` must hold: fsck is clean (so no
branch points at an incomplete commit), every acknowledged put, commit and merge is still there.
Trials alternate between SQLite and PostgreSQL.
"""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from graveler.client import Graveler
from tests.conftest import PG_URL
from tests.stress.harness import REPO, Ledger, check_invariants, create_repository, spawn
from tests.stress.workload import Config

KILL_KINDS = ("sql", "store.put", "data.read", "async")
MAX_OPS = 400  # far more than any self-kill point needs: every such trial ends in a kill
#: An external kill comes after up to 2 s; the worker must still be busy then, however fast.
MAX_OPS_ASYNC = 1_000_000


def kill_plan(kind: str, rng: random.Random) -> tuple[list[object] | None, float]:
    """(self-kill point for the worker, delay of an external kill)."""
    if kind == "sql":
        return ["sql", rng.randint(3, 200)], 0.0
    if kind == "store.put":
        return ["store.put", rng.randint(1, 25)], 0.0
    if kind == "data.read":
        return ["data.read", rng.randint(1, 40)], 0.0
    return None, rng.uniform(0.05, 2.0)


def run_trial(base: Path, url: str, i: int, rng: random.Random) -> tuple[str, int, Path]:
    """One worker killed one way; returns (kind, exit code, journal)."""
    kind = KILL_KINDS[i % len(KILL_KINDS)]
    plan, delay = kill_plan(kind, rng)
    journal = base / f"journal-{i}.jsonl"
    cfg = Config(
        home=str(base / "home"),
        database_url=url,
        repo=REPO,
        worker=f"t{i}",
        seed=rng.randrange(1 << 30),
        journal=str(journal),
        max_ops=MAX_OPS if plan is not None else MAX_OPS_ASYNC,
        kill=plan,
    )
    proc = spawn(cfg)
    assert proc.stdout is not None
    ready = proc.stdout.readline()
    if kind == "async" and ready.strip() == "ready":
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, f"trial {i} ({kind}) ended {proc.returncode}:\n{err}"
    return kind, proc.returncode, journal


def run_chain(base: Path, url: str, trials: int, seed: int) -> tuple[Counter[str], Ledger]:
    """``trials`` kills on one repository, checking the invariants after each."""
    rng = random.Random(seed)
    stats: Counter[str] = Counter()
    ledger = Ledger()
    with Graveler(home=base / "checker", database_url=url) as gv:
        create_repository(gv, (base / "ns").as_uri())
        for i in range(trials):
            kind, _, journal = run_trial(base, url, i, rng)
            cut_before = sum(ledger.unfinished.values())
            ledger.read(journal)
            stats[f"kills_{kind}"] += 1
            if sum(ledger.unfinished.values()) == cut_before:
                stats["kills_between_operations"] += 1
            verdict = check_invariants(gv.repository(REPO), ledger)
            stats["data_lost"] += verdict.data_lost
            verdict.assert_ok(f"after trial {i} ({kind}, seed {seed}): ")
            stats["kills_survived"] += 1
    for op, n in ledger.unfinished.items():
        stats[f"kills_during_{op}"] += n
    return stats, ledger


def _record(figures, area: str, stats: Counter[str], ledger: Ledger) -> None:
    figures.add(area, **stats)
    figures.add(area, acknowledged_operations=sum(ledger.counts.values()))


def test_sigkill_on_sqlite(tmp_path, level, figures):
    trials = level.crash_trials // 2 if PG_URL else level.crash_trials
    stats, ledger = run_chain(tmp_path, f"sqlite:///{tmp_path / 'refs.db'}", trials, figures.seed)
    _record(figures, "crash safety (SIGKILL), SQLite", stats, ledger)
    assert stats["kills_survived"] == trials and stats["data_lost"] == 0
    assert ledger.counts["put"] > 0


@pytest.mark.postgres
def test_sigkill_on_postgres(tmp_path, pg_schema_url, level, figures):
    trials = level.crash_trials - level.crash_trials // 2
    stats, ledger = run_chain(tmp_path, pg_schema_url, trials, figures.seed + 1)
    _record(figures, "crash safety (SIGKILL), PostgreSQL", stats, ledger)
    assert stats["kills_survived"] == trials and stats["data_lost"] == 0
    assert ledger.counts["put"] > 0
