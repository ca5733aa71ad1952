"""Suite ``fsck``: what a full consistency check costs, relative to reading the same repository.

Builds one commit of N small objects on local disk (objects written directly, then linked in one
``stage_entries`` call), then times, in one run:

* a plain scan: listing every object of ``main`` through the API (the baseline);
* ``fsck``: refs, history, every tree file re-read from the store and re-hashed, every entry
  decoded, the namespace listed and every object's existence and size checked;
* ``fsck --verify-objects``: the same, plus reading and hashing every object;
* ``refs dump``.

Figures are ratios to the baseline, measured in the same run.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def _objects(root: Path, n: int) -> Iterator[tuple[str, str, int]]:
    """Write n small objects under ``root/data``; yields (path, address, size)."""
    for i in range(n):
        body = f"row {i}\n".encode() * 4
        address = f"data/{i % 256:02x}/obj-{i:07d}"
        target = root / address
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        yield f"tbl/part={i // 5000:03d}/file-{i:07d}.csv", address, len(body)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def measure(n: int, workdir: str) -> dict[str, Any]:
    from graveler.client import Graveler
    from graveler.maintenance.fsck import fsck
    from graveler.maintenance.refdump import dump_refs

    root = Path(workdir, "ns")
    with Graveler(home=workdir, database_url=f"sqlite:///{workdir}/refs.db") as gv:
        repo = gv.create_repository("bench", root.as_uri())
        entries = []
        for path, address, size in _objects(root, n):
            checksum = hashlib.sha256((root / address).read_bytes()).hexdigest()
            entries.append(repo.make_linked_entry(path, address, checksum=checksum, size=size))
        repo.stage_entries("main", entries)
        repo.commit("main", f"{n} objects")
        scan_s, _ = _timed(lambda: sum(1 for _ in repo.iter_objects("main")))
        fsck_s, report = _timed(lambda: fsck(repo))
        deep_s, deep = _timed(lambda: fsck(repo, verify_objects=True))
        dump_s, _ = _timed(lambda: dump_refs(repo))
    assert report.clean and deep.clean and report.objects == n
    return {
        "n": n,
        "ranges": report.ranges,
        "scan_seconds": scan_s,
        "fsck_seconds": fsck_s,
        "fsck_verify_objects_seconds": deep_s,
        "refs_dump_seconds": dump_s,
        "fsck_vs_scan": fsck_s / scan_s,
        "fsck_verify_vs_scan": deep_s / scan_s,
    }


def run(sizes: list[int]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="graveler-bench-fsck-") as tmp:
            print(f"[fsck] {n:,} objects ...", flush=True)
            row = measure(n, tmp)
        results[str(n)] = row
        print(
            f"  scan {row['scan_seconds']:.2f} s; fsck {row['fsck_seconds']:.2f} s "
            f"({row['fsck_vs_scan']:.1f}x the scan); with --verify-objects "
            f"{row['fsck_verify_objects_seconds']:.2f} s ({row['fsck_verify_vs_scan']:.1f}x); "
            f"refs dump {row['refs_dump_seconds']:.3f} s; {row['ranges']} ranges"
        )
    return results
