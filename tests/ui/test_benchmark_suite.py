"""The ``ui`` benchmark suite (benchmarks/uipages.py) works end to end on a small lake: every
page it times answers 200, its compare page lists the 10 changes, and the harness runs it by
default at 1M objects (checked with --dry-run: building 1M objects is a benchmark's job)."""

import pytest

from benchmarks import __main__ as harness
from benchmarks import uipages


def test_the_suite_times_every_page_on_a_small_lake(capsys: pytest.CaptureFixture[str]) -> None:
    (result,) = uipages.run([2_000])
    assert result["n"] == 2_000 and result["target_ms"] == 200.0
    assert len(result["pages"]) == 7
    for name, figures in result["pages"].items():
        assert 0 < figures["min_ms"] <= figures["median_ms"], name
    out = capsys.readouterr().out
    assert "compare page, 2,000 objects, 10 changes:" in out and "target < 200 ms" in out


def test_the_harness_runs_it_at_1m_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert harness.main(["ui", "--dry-run"]) == 0
    assert "'ui': [1000000]" in capsys.readouterr().out
    assert harness.main(["ui", "--sizes", "100k", "--dry-run"]) == 0
    assert "'ui': [100000]" in capsys.readouterr().out
