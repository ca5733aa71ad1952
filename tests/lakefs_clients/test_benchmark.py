"""The lakefs_api benchmark runs (few calls): it fills its repository, starts ``graveler
serve``, and reports every operation through the API, in-process and beside lakeFS's figure
(its own calls check what the API answers: 1,000 listed objects, 10 changes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import lakefs_api
from benchmarks.lake import Context


def test_the_benchmark_runs_and_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lakefs_api, "CALLS", 3)
    monkeypatch.setattr(lakefs_api, "WARMUP", 1)
    out = lakefs_api.run(Context(n=0, workdir=tmp_path))
    assert set(out) == set(lakefs_api.LAKEFS_1_84_MS)
    for row in out.values():
        assert 0 < row["in_process_ms"] < 5_000 and 0 < row["api_ms"] < 5_000
