"""lakefs-spec's own test suite (the one its authors run against lakeFS), unmodified, against
``graveler serve``: every one of its tests passes, and every answer it got keeps lakeFS's
OpenAPI document.

The suite comes from lakefs-spec's source distribution, which ``make lakefs-spec-suite``
fetches and checks (scripts/lakefs-spec-suite.txt). It expects a lakeFS at
``localhost:8000`` with lakeFS's quickstart key, so it runs with the server in a private
network namespace (``unshare -n``; ``unshare -r -n`` for a user who is not root), where the
port is free whatever else the machine runs (tests/lakefs_clients/spec_suite.py does the
rest).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIN = ROOT / "scripts" / "lakefs-spec-suite.txt"
#: The tests lakefs-spec 0.15.1's suite collects (its parametrized cases counted one by one).
COLLECTED = 124
#: Tests of the suite that cannot pass against graveler, by node ID, with the reason. None.
IMPOSSIBLE: dict[str, str] = {}


def sdist() -> Path:
    """The pinned source distribution, checked against its SHA-256."""
    line = next(ln for ln in PIN.read_text().splitlines() if ln.strip() and not ln.startswith("#"))
    requirement, sha256 = line.split()
    project, version = requirement.split("==")
    path = ROOT / ".suites" / f"{project.replace('-', '_')}-{version}.tar.gz"
    assert path.is_file(), f"{path} is missing: run 'make lakefs-spec-suite'"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256, f"{path}: not the pinned file"
    return path


def in_own_network() -> list[str]:
    """The command prefix that runs a process in a network namespace of its own."""
    return ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-r", "-n"]


def outcomes(junit: Path) -> dict[str, str]:
    """Node ID -> passed, failed, error or skipped, from pytest's JUnit XML."""
    found: dict[str, str] = {}
    for case in ET.parse(junit).iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        node = f"{module}.py::{case.get('name')}"
        kinds = {child.tag for child in case}
        outcome = "passed"
        for tag, name in (("skipped", "skipped"), ("failure", "failed"), ("error", "error")):
            if tag in kinds:
                outcome = name
        found[node] = outcome
    return found


def test_lakefs_specs_own_suite_passes_against_graveler(tmp_path: Path) -> None:
    source = sdist()
    done = subprocess.run(
        [
            *in_own_network(),
            sys.executable,
            "-m",
            "tests.lakefs_clients.spec_suite",
            str(source),
            str(tmp_path),
        ],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    log = tmp_path / "pytest.log"
    tail = log.read_text()[-6000:] if log.is_file() else ""
    assert done.returncode == 0, f"the runner failed:\n{done.stderr[-4000:]}\n{tail}"
    report = json.loads((tmp_path / "report.json").read_text())
    results = outcomes(tmp_path / "junit.xml")
    counts = {k: sum(1 for v in results.values() if v == k) for k in set(results.values())}
    unexpected = {
        node: outcome
        for node, outcome in results.items()
        if (outcome != "passed") != (node in IMPOSSIBLE)
    }
    assert not unexpected, f"lakefs-spec's suite: {counts}; unexpected: {unexpected}\n{tail}"
    assert len(results) == COLLECTED, f"collected {len(results)}, not {COLLECTED}\n{tail}"
    assert counts.get("passed", 0) == COLLECTED - len(IMPOSSIBLE), counts
    assert report["returncode"] == (1 if IMPOSSIBLE else 0), tail
    assert not report["violations"], "answers that break lakeFS's OpenAPI document:\n" + (
        "\n".join(report["violations"][:30])
    )
    # The suite went through the tap to the API: a few of the operations it relies on.
    checked = " ".join(report["checked"])
    for operation in ("POST /api/v1/repositories ", "/objects/ls ", "/commits "):
        assert operation in checked + " ", operation
