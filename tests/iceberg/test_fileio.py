"""NamespaceIO's writes: the merged metadata file is named by the caller and written and
flushed in the background (``write_later``), with the same answer as ``write``."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from graveler.errors import StorageError
from graveler.objectstore import open_object_store
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
