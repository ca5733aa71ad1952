"""Memory backend: the process-wide registry behind ``mem://name``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graveler.core.errors import InvalidURI
from graveler.storage.objectstore import open_object_store
from graveler.storage.objectstore.memory import (
    MemoryObjectStore,
    clear_memory_stores,
    open_memory_store,
)


@pytest.fixture(autouse=True)
def _clean_registry() -> Iterator[None]:
    clear_memory_stores()
    yield
    clear_memory_stores()


def test_same_name_gives_the_same_store() -> None:
    first = open_object_store("mem://x")
    first.put("k", b"v")
    second = open_object_store("mem://x")
    assert second is first
    assert second.get("k") == b"v"
    assert open_memory_store("x") is first
    assert not open_object_store("mem://other").exists("k")


def test_clearing_the_registry_forgets_stores() -> None:
    open_object_store("mem://x").put("k", b"v")
    clear_memory_stores()
    assert not open_object_store("mem://x").exists("k")


def test_uri_and_names() -> None:
    assert open_object_store("mem://name/").uri == "mem://name"
    with pytest.raises(InvalidURI):
        open_object_store("mem://")
    with pytest.raises(InvalidURI):
        MemoryObjectStore("")


def test_get_returns_a_snapshot_not_a_live_view() -> None:
    store = MemoryObjectStore()
    store.put("k", bytearray(b"abc"))
    with store.open("k") as f:
        store.put("k", b"changed")
        assert f.read() == b"abc"
