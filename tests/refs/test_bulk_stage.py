"""Bulk staging: 200,000 entries from a generator in one ``stage`` call on each backend. Prints
the throughput (entries/s); asserts correctness only, never timings."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from graveler.core.model import StagedEntry
from graveler.storage.refs.store import MetadataStore
from tests.refs.conftest import new_repository

COUNT = 200_000


def _entries(count: int) -> Iterator[StagedEntry]:
    """Realistic sizes: ~40-byte keys, 32-byte identities, ~120-byte encoded values; every
    100th entry a tombstone; keys arrive in a scrambled (non-sorted) order."""
    for i in range(count):
        n = (i * 7919) % count
        key = b"tables/events/date=2026-11-%02d/part-%07d.parquet" % (n % 28 + 1, n)
        if n % 100 == 0:
            yield StagedEntry(key, None, None)
        else:
            yield StagedEntry(key, n.to_bytes(32, "big"), b"v" * 100 + n.to_bytes(20, "big"))


@pytest.mark.slow
def test_stage_200k_entries_in_one_call(store: MetadataStore) -> None:
    token = new_repository(store).staging_token

    started = time.perf_counter()
    assert store.stage("repo", "main", _entries(COUNT)) == token
    staged_in = time.perf_counter() - started

    started = time.perf_counter()
    count = 0
    previous = b""
    for entry in store.iter_staged(token):
        assert entry.key > previous
        previous = entry.key
        count += 1
    read_in = time.perf_counter() - started

    print(
        f"\n[{store.dialect}] stage {COUNT:,} entries: {staged_in:.2f} s = "
        f"{COUNT / staged_in:,.0f} entries/s; iterate: {COUNT / read_in:,.0f} entries/s"
    )
    assert count == COUNT
    assert store.count_staged(token) == COUNT
    probe = b"tables/events/date=2026-11-01/part-0000000.parquet"
    assert store.get_staged(token, probe) == StagedEntry(probe, None, None)
