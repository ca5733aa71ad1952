"""Damaged files raise CorruptFile (or UnsupportedFormat); wrong data is never returned."""

from __future__ import annotations

from pathlib import Path

import pytest

from graveler.core.errors import CorruptFile
from graveler.storage.sstable import SstReader
from graveler.storage.sstable.format import FOOTER_SIZE, TRAILER_SIZE

from .helpers import write_sst

_File = tuple[bytes, list[tuple[bytes, bytes]]]  # file bytes and the items written


def _items(n: int) -> list[tuple[bytes, bytes]]:
    return [(b"key/%06d" % i, b"value-%06d" % i * 3) for i in range(n)]


@pytest.fixture(scope="module")
def small_file(tmp_path_factory: pytest.TempPathFactory) -> _File:
    items = _items(200)
    path = tmp_path_factory.mktemp("sst") / "small.sst"
    write_sst(path, items, block_size=512)
    return path.read_bytes(), items


def _assert_detected(data: bytes, items: list[tuple[bytes, bytes]]) -> None:
    """Opening or fully reading ``data`` raises CorruptFile."""
    with pytest.raises(CorruptFile):
        SstReader.from_bytes(data).read_all()


def _flip(data: bytes, pos: int, mask: int) -> bytes:
    damaged = bytearray(data)
    damaged[pos] ^= mask
    return bytes(damaged)


def test_every_single_byte_flip_is_detected(small_file: _File) -> None:
    data, items = small_file
    assert len(data) > 5000  # several data blocks plus index, properties, metaindex, footer
    for pos in range(len(data)):
        mask = 1 << (pos % 8)
        _assert_detected(_flip(data, pos, mask), items)
        if pos % 5 == 0:
            _assert_detected(_flip(data, pos, 0xFF), items)


def test_point_reads_never_return_wrong_data(small_file: _File) -> None:
    data, items = small_file
    model = dict(items)
    probes = [k for k, _ in items[::23]] + [b"key/", b"key/000050x", b"zzz"]
    for pos in range(0, len(data), 7):
        damaged = _flip(data, pos, 0x10)
        try:
            reader = SstReader.from_bytes(damaged)
        except CorruptFile:
            continue
        for probe in probes:
            try:
                assert reader.get(probe) == model.get(probe)
                got = next(reader.seek_ge(probe), None)
            except CorruptFile:
                continue
            expected = next(((k, v) for k, v in items if k >= probe), None)
            assert got == expected


def test_every_truncation_is_detected(small_file: _File) -> None:
    data, items = small_file
    for length in range(len(data)):
        _assert_detected(data[:length], items)


def test_extra_bytes_are_detected(small_file: _File) -> None:
    data, items = small_file
    for extra in (b"\x00", b"\x00" * 8, data[-FOOTER_SIZE:]):
        _assert_detected(data + extra, items)
        _assert_detected(extra + data, items)


def test_large_file_sampled_flips(tmp_path: Path) -> None:
    items = _items(5000)
    path = tmp_path / "large.sst"
    write_sst(path, items, block_size=4096)
    data = path.read_bytes()
    # Sparse over the data blocks, dense over the tail (index, properties, metaindex, footer).
    positions = list(range(0, len(data), 1009)) + list(range(len(data) - 3000, len(data), 3))
    for pos in positions:
        _assert_detected(_flip(data, pos, 0x04), items)


def test_swapped_equal_size_blocks_are_detected(tmp_path: Path) -> None:
    # Fixed-size entries make equal-size data blocks; each block's checksum is still valid
    # in isolation, so only format version 6's offset-dependent context checksum catches this.
    items = [(b"%08d" % i, b"v" * 50) for i in range(400)]
    path = tmp_path / "t.sst"
    write_sst(path, items, block_size=600)
    data = path.read_bytes()
    reader = SstReader.from_bytes(data)
    (o1, s1), (o2, s2) = reader._handles[1], reader._handles[2]
    assert s1 == s2 and o2 == o1 + s1 + TRAILER_SIZE
    block1, block2 = data[o1:o2], data[o2 : o2 + s2 + TRAILER_SIZE]
    swapped = data[:o1] + block2 + block1 + data[o2 + s2 + TRAILER_SIZE :]
    assert len(swapped) == len(data)
    _assert_detected(swapped, items)
    with pytest.raises(CorruptFile):
        list(SstReader.from_bytes(swapped))


def test_block_from_another_file_is_detected(tmp_path: Path) -> None:
    # Same records written twice give different base context checksums (session ids).
    items = [(b"%08d" % i, b"v" * 50) for i in range(400)]
    first, second = tmp_path / "a.sst", tmp_path / "b.sst"
    write_sst(first, items, block_size=600)
    write_sst(second, items, block_size=600)
    a, b = first.read_bytes(), second.read_bytes()
    offset, size = SstReader.from_bytes(a)._handles[0]
    end = offset + size + TRAILER_SIZE
    assert a[: end - 4] == b[: end - 4]  # same block contents and compression byte...
    assert a[end - 4 : end] != b[end - 4 : end]  # ...but a checksum bound to its file
    _assert_detected(b[:end] + a[end:], items)


def test_garbage_is_rejected() -> None:
    for data in (b"", b"\x00" * 10, b"\x00" * 100, bytes(range(256)) * 4):
        with pytest.raises(CorruptFile):
            SstReader.from_bytes(data)
