"""Fixtures for committed-tree tests: a fresh in-memory store, a RAM-only cache, and helpers to
build records whose identity is a hash of their content."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable

import pytest

from graveler.core.model import RangeSettings
from graveler.storage.committed.cache import TieredCache
from graveler.storage.committed.manager import CommittedManager
from graveler.storage.committed.record import ValueRecord
from graveler.storage.objectstore import ObjectStore, open_object_store

_counter = itertools.count()

#: Tiny ranges so that small trees already have many ranges.
TINY = RangeSettings(min_size=0, max_size=300, raggedness=5)


def make_record(key: bytes | str, content: bytes | str = b"v") -> ValueRecord:
    k = key.encode() if isinstance(key, str) else key
    c = content.encode() if isinstance(content, str) else content
    return ValueRecord(k, hashlib.sha256(c).digest(), b"addr:" + c)


@pytest.fixture
def store() -> ObjectStore:
    return open_object_store(f"mem://committed-{next(_counter)}")


@pytest.fixture
def manager_factory(store: ObjectStore) -> Callable[..., CommittedManager]:
    def build(settings: RangeSettings = TINY, cache: TieredCache | None = None) -> CommittedManager:
        return CommittedManager(store, cache or TieredCache(None), settings)

    return build


@pytest.fixture
def cm(manager_factory: Callable[..., CommittedManager]) -> CommittedManager:
    return manager_factory()
