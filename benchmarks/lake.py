"""Shared fixtures of the benchmark harness: a synthetic data lake, timing helpers and the run
context (scale, work directory, cached lakes).

The lake is an hourly ingest layout, ``input/YYYY/MM/DD/hh/part-NNNNN.parquet`` with 500 files
an hour, so paths sort in ingest order, as in the seed documents' example. Object bytes are not
written: every suite here measures metadata (refs, staging, trees), the part graveler adds.
"""

from __future__ import annotations

import os
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from graveler.client import Graveler
from graveler.repository import Repository
from graveler.storage.entry import ObjectEntry

FILES_PER_HOUR = 500
EPOCH = datetime(2020, 1, 1, tzinfo=UTC)
SCALES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000, "10m": 10_000_000}


def lake_path(i: int, hour_offset: int = 0, tag: str = "part") -> str:
    """The i-th file of the lake (paths sort in i order)."""
    hour, part = divmod(i, FILES_PER_HOUR)
    t = EPOCH + timedelta(hours=hour + hour_offset)
    return f"input/{t:%Y/%m/%d/%H}/{tag}-{part:05d}.parquet"


def lake_entry(path: str, version: int = 0) -> ObjectEntry:
    digest = uuid.uuid5(uuid.NAMESPACE_URL, f"{path}#{version}").hex * 2
    return ObjectEntry(
        path=path,
        physical_address=f"data/{digest[:2]}/{digest}",
        size=100_000 + version,
        checksum=digest,
        mtime=EPOCH,
        content_type="application/octet-stream",
    )


def lake_entries(n: int) -> Iterator[ObjectEntry]:
    return (lake_entry(lake_path(i)) for i in range(n))


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def median_time(fn: Callable[[], Any], repeat: int = 5) -> float:
    return statistics.median(timed(fn) for _ in range(repeat))


def tree_file_stats(repo: Repository) -> tuple[int, int]:
    """(number, total bytes) of tree files in the repository's namespace."""
    files = list(repo.store.list("_graveler/"))
    return len(files), sum(f.size for f in files)


@dataclass
class Lake:
    """A repository whose main branch holds ``n`` committed lake files."""

    n: int
    home: Path
    database_url: str
    commit_id: str

    def client(self, home: Path | None = None) -> Graveler:
        """A client; a fresh ``home`` means an empty tree cache (RAM and disk)."""
        return Graveler(home=home or self.home, database_url=self.database_url)


@dataclass
class Context:
    """What every suite receives: the scale, a work directory and shared lakes."""

    n: int
    workdir: Path
    postgres_url: str | None = None
    _lakes: dict[int, Lake] = field(default_factory=dict)

    def lake(self, n: int) -> Lake:
        if n not in self._lakes:
            self._lakes[n] = build_lake(n, self.workdir / f"lake-{n}")
        return self._lakes[n]

    def fresh_dir(self, name: str) -> Path:
        path = self.workdir / f"{name}-{uuid.uuid4().hex[:8]}"
        path.mkdir(parents=True)
        return path

    @property
    def ladder(self) -> list[int]:
        """The sizes up to this run's scale, for scaling curves."""
        return [s for s in SCALES.values() if s <= self.n]


def build_lake(n: int, home: Path) -> Lake:
    print(f"  [lake] importing {n:,} files ...", flush=True)
    url = f"sqlite:///{home / 'refs.db'}"
    with Graveler(home=home, database_url=url) as gv:
        repo = gv.create_repository("lake", (home / "ns").as_uri())
        commit = repo.import_entries("main", lake_entries(n), f"import {n} files")
    return Lake(n, home, url, commit.id)


def env_postgres_url() -> str | None:
    return os.environ.get("GRAVELER_TEST_POSTGRES_URL") or os.environ.get(
        "GRAVELER_BENCH_POSTGRES_URL"
    )
