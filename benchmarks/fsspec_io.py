"""Suite ``fsspec``: the cost of going through ``graveler://`` instead of the Repository API.

Every figure is a ratio measured in one run on one machine (fsspec path / direct engine call):

* streamed write: ``fs.open("wb")`` (bounded pipe + upload thread) vs ``Repository.put`` of
  the same bytes from a file object;
* sequential read: ``fs.open("rb")`` in 4 MiB reads vs ``Repository.open`` streamed;
* random 64 KiB reads: ``fs.open("rb")`` seek+read (uncached) vs ``ObjectStore.read_range``;
* listing: ``fs.find`` and a paged ``fs.ls`` of N objects vs ``Repository.iter_objects``;
* peak RSS of a 1 GiB ``open("wb")`` to local disk in a child process (limit 200 MiB).

Bytes of the ratio figures go to a ``mem://`` namespace, so they show the fsspec path's own
cost rather than the disk's (local-disk throughput varies several-fold with writeback state).

``--sizes`` sets the number of objects listed (default 10k); the byte volumes are fixed.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

MIB = 1 << 20
WRITE_MIB = 256
RANDOM_READS = 400


def _timed(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best of ``repeat`` runs (the machine is shared; the minimum is the least disturbed)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _setup(workdir: str) -> tuple[Any, Any]:
    from graveler_fsspec import GravelerFileSystem

    from graveler.client import Graveler

    gv = Graveler(home=Path(workdir, "home"), database_url=f"sqlite:///{workdir}/refs.db")
    repo = gv.create_repository("bench", f"mem://fsspec-bench-{os.getpid()}")
    return repo, GravelerFileSystem(client=gv, skip_instance_cache=True)


def _write_ratio(repo: Any, fs: Any) -> dict[str, float]:
    block = os.urandom(MIB)

    class Blocks(io.RawIOBase):
        left = WRITE_MIB

        def read(self, n: int = -1) -> bytes:
            if self.left == 0:
                return b""
            self.left -= 1
            return block

    def drop(key: str) -> None:  # keep the in-memory namespace small between repetitions
        repo.store.delete(repo.stat("main", key).physical_address)

    def through_fs() -> None:
        with fs.open("bench/main/w/fs.bin", "wb") as f:
            for _ in range(WRITE_MIB):
                f.write(block)
        drop("w/fs.bin")

    def direct() -> None:
        repo.put("main", "w/direct.bin", Blocks())
        drop("w/direct.bin")

    via_fs, plain = _timed(through_fs), _timed(direct)
    repo.put("main", "w/direct.bin", Blocks())  # read by the next measurements
    return {"write_fs_mib_per_s": WRITE_MIB / via_fs, "write_direct_mib_per_s": WRITE_MIB / plain,
            "write_ratio": via_fs / plain}  # fmt: skip


def _read_ratios(repo: Any, fs: Any) -> dict[str, float]:
    def read_fs() -> None:
        with fs.open("bench/main/w/direct.bin", "rb", block_size=4 * MIB) as f:
            while f.read(4 * MIB):
                pass

    def read_direct() -> None:
        with repo.open("main", "w/direct.bin") as f:
            while f.read(4 * MIB):
                pass

    entry = repo.stat("main", "w/direct.bin")
    offsets = [random.randrange(0, entry.size - 65536) for _ in range(RANDOM_READS)]

    def random_fs() -> None:
        with fs.open("bench/main/w/direct.bin", "rb", cache_type="none") as f:
            for off in offsets:
                f.seek(off)
                f.read(65536)

    def random_direct() -> None:
        for off in offsets:
            repo.store.read_range(entry.physical_address, off, 65536)

    seq_fs, seq_direct = _timed(read_fs), _timed(read_direct)
    rnd_fs, rnd_direct = _timed(random_fs), _timed(random_direct)
    return {"read_fs_mib_per_s": WRITE_MIB / seq_fs, "read_ratio": seq_fs / seq_direct,
            "random_read_ratio": rnd_fs / rnd_direct}  # fmt: skip


def _listing_ratios(repo: Any, fs: Any, n: int) -> dict[str, float]:
    one = repo.put("main", "l/d000/f0000000", b"x")
    entries = [replace(one, path=f"l/d{i % 100:03d}/f{i:07d}") for i in range(n)]
    repo.stage_entries("main", entries)
    repo.commit("main", "listing")
    direct = _timed(lambda: sum(1 for _ in repo.iter_objects("main", "l/")))
    find = _timed(lambda: fs.find("bench/main/l"))
    ls = _timed(lambda: [fs.ls(f"bench/main/l/d{d:03d}") for d in range(100)])
    return {"listed": n, "find_ratio": find / direct, "ls_all_dirs_ratio": ls / direct,
            "find_per_s": n / find}  # fmt: skip


def _peak_rss_child() -> dict[str, float]:
    code = "import json; from tests.fsspec.bigwrite import main; import sys; " \
        "print(json.dumps(main(sys.argv[1], 1 << 30)))"  # fmt: skip
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'providers'}"}
    with tempfile.TemporaryDirectory(prefix="graveler-bench-") as tmp:
        out = subprocess.run([sys.executable, "-c", code, tmp], capture_output=True, text=True,
                             check=True, cwd=root, env=env)  # fmt: skip
    report = json.loads(out.stdout.strip().splitlines()[-1])
    return {"write_1gib_peak_rss_mib": report["peak_rss_mib"],
            "rss_before_write_mib": report["rss_before_write_mib"]}  # fmt: skip


def run(sizes: list[int]) -> dict[str, Any]:
    n = min(sizes) if sizes else 10_000
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="graveler-bench-") as tmp:
        repo, fs = _setup(tmp)
        print(f"[fsspec] writing and reading {WRITE_MIB} MiB, listing {n:,} objects ...")
        result.update(_write_ratio(repo, fs))
        result.update(_read_ratios(repo, fs))
        result.update(_listing_ratios(repo, fs, n))
        repo.client.close()
    print("[fsspec] writing 1 GiB through open('wb') in a child process ...", flush=True)
    result.update(_peak_rss_child())
    for key, value in result.items():
        print(f"  {key:28} {value:,.2f}")
    return result
