"""The delta-merge benchmark runs (small sizes): it builds its tables, merges as a table and
as files, and delta-rs loads the merged log."""

from __future__ import annotations

import pytest

from benchmarks import delta_merge


def test_the_benchmark_runs_and_reports(capsys: pytest.CaptureFixture[str]):
    out = delta_merge.run([150, 250])
    assert set(out) == {"150", "250", "ratio"}
    for size in ("150", "250"):
        assert 0 < out[size]["logical_seconds"] < 30 and out[size]["file_level_seconds"] > 0
    assert "logical merge ms" in capsys.readouterr().out
