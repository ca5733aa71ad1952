"""SstWriter (RocksDB's own writer, layout v1): ordering contract, abort/finish lifecycle, and
RocksDB compatibility."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graveler.core.errors import InvalidArgument, StorageError
from graveler.storage.sstable import SstReader, SstWriter, table_bytes
from graveler.storage.sstable.format import CHECKSUM_XXH3

from .helpers import ingest_and_dump, write_sst

ITEMS = [(b"key%05d" % i, b"value-%d" % i) for i in range(1000)]


def test_written_file_ingests_into_rocksdb(tmp_path: Path) -> None:
    path = tmp_path / "a.sst"
    size = write_sst(path, ITEMS, block_size=512)
    assert size == os.path.getsize(path)
    assert ingest_and_dump(path) == ITEMS


def test_layout_is_pinned(tmp_path: Path) -> None:
    path = tmp_path / "a.sst"
    write_sst(path, ITEMS)
    reader = SstReader.open(path)  # layout v1: what graveler wrote before its own builder
    assert reader.format_version == 6
    assert reader.checksum_type == CHECKSUM_XXH3
    assert reader.properties["rocksdb.comparator"] == b"leveldb.BytewiseComparator"
    assert reader.num_entries == len(ITEMS) == len(reader)


def test_entries_counts_adds(tmp_path: Path) -> None:
    with SstWriter(str(tmp_path / "a.sst")) as writer:
        assert writer.entries == 0
        writer.add(b"a", b"1")
        writer.add(b"b", b"")
        assert writer.entries == 2
        writer.finish()


@pytest.mark.parametrize("second", [b"a", b"", b"0"])
def test_unsorted_or_duplicate_key_is_rejected(tmp_path: Path, second: bytes) -> None:
    path = tmp_path / "a.sst"
    with SstWriter(str(path)) as writer:
        writer.add(b"a", b"1")
        with pytest.raises(InvalidArgument):
            writer.add(second, b"2")
        writer.add(b"b", b"3")  # the writer stays usable after a rejected add
        writer.finish()
    assert ingest_and_dump(path) == [(b"a", b"1"), (b"b", b"3")]


def test_non_bytes_rejected(tmp_path: Path) -> None:
    with SstWriter(str(tmp_path / "a.sst")) as writer:
        with pytest.raises(InvalidArgument):
            writer.add("a", b"1")  # type: ignore[arg-type]
        with pytest.raises(InvalidArgument):
            writer.add(b"a", bytearray(b"1"))  # type: ignore[arg-type]


def test_empty_key_and_value_allowed(tmp_path: Path) -> None:
    path = tmp_path / "a.sst"
    write_sst(path, [(b"", b""), (b"\x00", b"x")])
    assert ingest_and_dump(path) == [(b"", b""), (b"\x00", b"x")]
    assert SstReader.open(path).read_all() == ([b"", b"\x00"], [b"", b"x"])


def test_abort_removes_file_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "a.sst"
    writer = SstWriter(str(path))
    writer.add(b"a", b"1")
    assert path.exists()
    writer.abort()
    assert not path.exists()
    writer.abort()
    with pytest.raises(StorageError):
        writer.add(b"b", b"2")
    with pytest.raises(StorageError):
        writer.finish()


def test_context_manager_aborts_on_exception(tmp_path: Path) -> None:
    path = tmp_path / "a.sst"
    with pytest.raises(RuntimeError), SstWriter(str(path)) as writer:
        writer.add(b"a", b"1")
        raise RuntimeError("boom")
    assert not path.exists()


def test_context_manager_aborts_without_finish(tmp_path: Path) -> None:
    path = tmp_path / "a.sst"
    with SstWriter(str(path)) as writer:
        writer.add(b"a", b"1")
    assert not path.exists()


def test_finish_with_no_entries_raises_and_removes_file(tmp_path: Path) -> None:
    path = tmp_path / "a.sst"
    writer = SstWriter(str(path))
    with pytest.raises(InvalidArgument):
        writer.finish()
    assert not path.exists()
    writer.abort()  # still idempotent


def test_abort_after_finish_keeps_file(tmp_path: Path) -> None:
    path = tmp_path / "a.sst"
    writer = SstWriter(str(path))
    writer.add(b"a", b"1")
    writer.finish()
    writer.abort()
    assert SstReader.open(path).get(b"a") == b"1"
    with pytest.raises(StorageError):
        writer.finish()


def test_bad_block_size_and_bad_path(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument):
        SstWriter(str(tmp_path / "a.sst"), block_size=0)
    with pytest.raises(StorageError):
        SstWriter(str(tmp_path / "missing" / "dir" / "a.sst"))


def test_add_many_writes_what_add_writes_and_checks_the_same(tmp_path: Path) -> None:
    items = [(b"a", b"1"), (b"b", b""), (b"c", b"3")]
    with SstWriter(str(tmp_path / "many.sst")) as writer:
        writer.add(*items[0])
        writer.add_many([k for k, _ in items[1:]], [v for _, v in items[1:]])
        writer.add_many([], [])
        assert writer.entries == 3
        with pytest.raises(InvalidArgument, match="order"):
            writer.add_many([b"d", b"c2"], [b"", b""])  # c2 sorts before c
        with pytest.raises(InvalidArgument, match="order"):
            writer.add_many([b"c"], [b""])  # not after the last key added
        with pytest.raises(InvalidArgument, match="bytes"):
            writer.add_many([b"d", "e"], [b"", b""])  # type: ignore[list-item]
        with pytest.raises(InvalidArgument, match="bytes"):
            writer.add_many([b"d"], [])
        writer.finish()
    assert SstReader.open(str(tmp_path / "many.sst")).read_all() == (
        [k for k, _ in items],
        [v for _, v in items],
    )


@pytest.mark.parametrize("where", ["memory file", "scratch file"])
def test_table_bytes_in_memory_or_through_a_scratch_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """``table_bytes`` builds the table in an anonymous memory file on Linux and in a scratch
    file elsewhere; either way the bytes are a complete table and no file is left behind."""
    if where == "scratch file":
        monkeypatch.delattr(os, "memfd_create", raising=False)
    keys, values = [k for k, _ in ITEMS], [v for _, v in ITEMS]
    data = table_bytes(keys, values, str(tmp_path))
    assert list(SstReader.from_bytes(data)) == ITEMS
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InvalidArgument):
        table_bytes([b"b", b"a"], [b"1", b"2"], str(tmp_path))
    assert list(tmp_path.iterdir()) == []
