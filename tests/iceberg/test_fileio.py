"""NamespaceIO's writes: the merged metadata file is named by the caller and written and
flushed in the background (``write_later``), with the same answer as ``write``."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from graveler.core.errors import StorageError
from graveler.storage.objectstore import open_object_store
from graveler.tables.iceberg.fileio import NamespaceIO


@pytest.fixture
def nsio(tmp_path: Path) -> NamespaceIO:
    uri = (tmp_path / "ns").as_uri()
    return NamespaceIO(open_object_store(uri), uri)


def test_write_later_answers_as_write_does(nsio: NamespaceIO, tmp_path: Path) -> None:
    data = os.urandom((3 << 20) + 5)
    now = nsio.write("data/a.json", data)
    written = nsio.write_later("data/b.json", [data[:1000], memoryview(data)[1000:]])
    assert "data/b.json" not in nsio.written  # recorded once waited for
    later = written()
    assert (later.size, later.checksum) == (now.size, now.checksum)
    assert later.checksum == hashlib.sha256(data).hexdigest()
    assert nsio.written["data/b.json"] == later
    assert (tmp_path / "ns" / "data" / "b.json").read_bytes() == data


def test_a_failed_flush_is_raised_by_the_answer(
    nsio: NamespaceIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Any] = []
    real_open = nsio.store.open_writer

    def open_writer(key: str, **kwargs: Any) -> Any:
        writer = real_open(key, **kwargs)
        opened.append(writer)

        def broken_commit() -> Any:
            writer.abort()
            raise StorageError("disk full")

        monkeypatch.setattr(writer, "commit", broken_commit)
        return writer

    monkeypatch.setattr(nsio.store, "open_writer", open_writer)
    written = nsio.write_later("data/c.json", [b"{}"])
    with pytest.raises(StorageError, match="disk full"):
        written()
    assert "data/c.json" not in nsio.written
    assert not nsio.store.exists("data/c.json")


def test_an_existing_name_is_refused_at_once(nsio: NamespaceIO) -> None:
    nsio.write("data/d.json", b"{}")
    with pytest.raises(StorageError):
        nsio.write_later("data/d.json", [b"{}"])


def test_deferred_writes_are_flushed_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deferred IO opens its writers with durable=False, answers once the file is written
    and flushes it in the background: each future in ``flushing`` gives the key once the
    store has synced it."""
    uri = (tmp_path / "ns").as_uri()
    store = open_object_store(uri)
    deferred = NamespaceIO(store, uri, deferred=True)
    opened: list[bool] = []
    synced: list[str] = []
    real_open, real_sync = store.open_writer, store.sync

    def open_writer(key: str, **kwargs: Any) -> Any:
        opened.append(kwargs["durable"])
        return real_open(key, **kwargs)

    def sync(keys: Any) -> None:
        keys = list(keys)
        real_sync(keys)
        synced.extend(keys)

    monkeypatch.setattr(store, "open_writer", open_writer)
    monkeypatch.setattr(store, "sync", sync)
    now = deferred.write("data/e.json", b"{}")
    later = deferred.write_later("data/f.json", [b"[", b"]"])()
    assert (now.size, later.size, opened) == (2, 2, [False, False])
    assert sorted(f.result() for f in deferred.flushing) == ["data/e.json", "data/f.json"]
    assert sorted(synced) == ["data/e.json", "data/f.json"]
    assert (tmp_path / "ns" / "data" / "f.json").read_bytes() == b"[]"
