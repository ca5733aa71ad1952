"""Reliability tests: concurrent writers, crash safety, corruption, S3 faults, bad input.

Two forms: ``make test`` runs the short one; ``make stress`` sets ``GRAVELER_STRESS=long``
(more processes' work, more kills, more faults, more fuzzing) and
``GRAVELER_STRESS_REPORT=PATH``, where the figures of the run are written as JSON (operations
performed, faults injected, kills survived, data lost). The same figures are printed at the end
of the pytest run.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class Level:
    name: str
    stress_ops: int  # operations per writer process in the 8-process stress test
    crash_trials: int  # SIGKILL trials (split between SQLite and PostgreSQL)
    fault_rounds: int  # rounds of graveler operations through the faulty S3 proxy
    fuzz_examples: int  # hypothesis examples per bad-input property


SHORT = Level("short", stress_ops=25, crash_trials=10, fault_rounds=3, fuzz_examples=40)
LONG = Level("long", stress_ops=250, crash_trials=60, fault_rounds=30, fuzz_examples=400)


class Figures:
    """Counters per test area, written to GRAVELER_STRESS_REPORT at the end of the session."""

    def __init__(self, level: Level, seed: int) -> None:
        self.level = level
        self.seed = seed
        self.areas: dict[str, Counter[str]] = {}

    def add(self, area: str, **counts: int) -> None:
        self.areas.setdefault(area, Counter()).update(counts)

    def document(self) -> dict[str, Any]:
        return {
            "level": self.level.name,
            "seed": self.seed,
            "areas": {k: dict(sorted(v.items())) for k, v in sorted(self.areas.items())},
        }


_FIGURES: list[Figures] = []


@pytest.fixture(scope="session")
def level() -> Level:
    return LONG if os.environ.get("GRAVELER_STRESS") == "long" else SHORT


@pytest.fixture(scope="session")
def figures(level: Level) -> Iterator[Figures]:
    seed = int(os.environ.get("GRAVELER_STRESS_SEED") or random.randrange(1 << 30))
    recorded = Figures(level, seed)
    _FIGURES.append(recorded)
    yield recorded
    path = os.environ.get("GRAVELER_STRESS_REPORT")
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(recorded.document(), fh, indent=2)
            fh.write("\n")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for recorded in _FIGURES:
        doc = recorded.document()
        terminalreporter.section(f"reliability figures ({doc['level']}, seed {doc['seed']})")
        for area, counts in doc["areas"].items():
            shown = ", ".join(f"{k}={v}" for k, v in counts.items())
            terminalreporter.write_line(f"{area}: {shown}")
