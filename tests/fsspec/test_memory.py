"""Writing 1 GiB through ``open("wb")`` keeps the writer's peak RSS under 200 MiB.

The write runs in a child process (``bigwrite.py``) so that ``ru_maxrss`` measures that
workload alone; the parent then checks what was stored through a fresh client.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graveler.client import Graveler

MIB = 1 << 20
GIB = 1 << 30
LIMIT_MIB = 200
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_writing_one_gib_streams_with_bounded_memory(tmp_path):
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'providers'}"}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tests.fsspec.bigwrite", str(tmp_path), str(GIB)],
            capture_output=True, text=True, check=True, cwd=ROOT, env=env, timeout=300,
        )  # fmt: skip
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        with Graveler(home=tmp_path / "home", database_url=f"sqlite:///{tmp_path}/refs.db") as gv:
            repo = gv.repository("lake")
            entry = repo.stat("main", "big.bin")
            last_chunk_head = repo.store.read_range(entry.physical_address, GIB - MIB, 8)
            stored = [info.key for info in repo.store.list("data/")]
        assert entry.size == GIB and entry.checksum == report["expected_sha256"]
        assert last_chunk_head == (GIB // MIB - 1).to_bytes(8, "big")  # chunks in order
        assert stored == [entry.physical_address]  # one object, no leftovers
        print(f"peak RSS {report['peak_rss_mib']:.0f} MiB "
              f"(before writing {report['rss_before_write_mib']:.0f} MiB)")  # fmt: skip
        assert report["peak_rss_mib"] < LIMIT_MIB
    finally:
        shutil.rmtree(tmp_path / "ns", ignore_errors=True)
