"""Child process of ``test_memory.py``: write SIZE bytes through ``fs.open("wb")`` and print
a JSON report with the peak resident set size of this process.

    python -m tests.fsspec.bigwrite WORKDIR SIZE_BYTES
"""

from __future__ import annotations

import hashlib
import json
import resource
import sys
from pathlib import Path

CHUNK = 1 << 20


def chunk(i: int, seed: bytes) -> bytes:
    """1 MiB of varied bytes: a random seed block with the chunk number written over it."""
    return i.to_bytes(8, "big") + seed[8:]


def peak_rss_mib() -> float:
    """Peak resident set size of this process image. ``VmHWM`` belongs to the current
    address space; ``ru_maxrss`` would also count the parent's memory copied by ``fork``
    before ``exec``, so it is only the fallback off Linux."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(workdir: str, size: int) -> dict[str, object]:
    import os

    from graveler_fsspec import GravelerFileSystem

    from graveler.client import Graveler

    gv = Graveler(home=Path(workdir, "home"), database_url=f"sqlite:///{workdir}/refs.db")
    gv.create_repository("lake", Path(workdir, "ns").as_uri())
    fs = GravelerFileSystem(client=gv, skip_instance_cache=True)
    seed = os.urandom(CHUNK)
    expected = hashlib.sha256()
    rss_before = peak_rss_mib()
    with fs.open("lake/main/big.bin", "wb") as f:
        for i in range(size // CHUNK):
            block = chunk(i, seed)
            expected.update(block)
            f.write(block)
    peak = peak_rss_mib()
    return {
        "peak_rss_mib": peak,
        "rss_before_write_mib": rss_before,
        "expected_sha256": expected.hexdigest(),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]))))
