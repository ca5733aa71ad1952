"""The iceberg benchmark's merge half runs (small histories): it builds its tables, merges a
run branch's snapshots on main's, and times Iceberg's own commit on the same tables and the
durable write of their metadata file."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import iceberg
from benchmarks.lake import Context


def test_the_merge_benchmark_runs_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(iceberg, "HISTORIES", (3, 6))
    monkeypatch.setattr(iceberg, "MERGE_ROUNDS", 1)
    out = iceberg.merges(Context(n=0, workdir=tmp_path))
    assert set(out) == {"merge", "iceberg commit", "metadata write"}
    for timings in out.values():
        assert set(timings) == {3, 6} and all(0 < t < 30 for t in timings.values())
