"""The reader on files RocksDB writes with other options: older/newer format versions, other
checksums, delta-encoded index values, and features it must refuse rather than misread."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from rocksdict import (
    BlockBasedIndexType,
    BlockBasedOptions,
    ChecksumType,
    DataBlockIndexType,
    DBCompressionType,
    Options,
    SstFileWriter,
)

from graveler.core.errors import CorruptFile, UnsupportedFormat
from graveler.storage.sstable import SstReader

ITEMS = sorted((b"k%05d" % i + b"\x00" * (i % 3), b"%d" % i * (i % 60)) for i in range(1500))

Tweak = Callable[[BlockBasedOptions, Options], None]


def _write(path: Path, tweak: Tweak, items: list[tuple[bytes, bytes]] = ITEMS) -> SstReader:
    table = BlockBasedOptions()
    table.set_block_size(512)
    table.set_checksum_type(ChecksumType.xxh3())
    options = Options(raw_mode=True)
    options.set_compression_type(DBCompressionType.none())
    tweak(table, options)
    options.set_block_based_table_factory(table)
    writer = SstFileWriter(options=options)
    writer.open(str(path))
    for key, value in items:
        writer[key] = value
    writer.finish()
    return SstReader.open(path)


def _check(reader: SstReader) -> None:
    keys, values = reader.read_all()
    assert list(zip(keys, values, strict=True)) == ITEMS
    for key, value in ITEMS[::37]:
        assert reader.get(key) == value
        assert reader.get(key + b"\x01") is None
    assert list(reader.seek_ge(ITEMS[700][0][:-1])) == ITEMS[700:]


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("index_restart_interval", [1, 4])
def test_format_versions(tmp_path: Path, version: int, index_restart_interval: int) -> None:
    def tweak(table: BlockBasedOptions, _: Options) -> None:
        table.set_format_version(version)
        table.set_index_block_restart_interval(index_restart_interval)

    reader = _write(tmp_path / "t.sst", tweak)
    assert reader.format_version == version
    _check(reader)


@pytest.mark.parametrize("checksum", ["xxhash", "xxhash64", "xxh3"])
@pytest.mark.parametrize("version", [5, 6])
def test_xxhash_checksum_types(tmp_path: Path, checksum: str, version: int) -> None:
    def tweak(table: BlockBasedOptions, _: Options) -> None:
        table.set_checksum_type(getattr(ChecksumType, checksum)())
        table.set_format_version(version)

    _check(_write(tmp_path / "t.sst", tweak))


@pytest.mark.parametrize("checksum", ["crc32c", "no_checksum"])
def test_unverifiable_checksum_types_are_unsupported(tmp_path: Path, checksum: str) -> None:
    def tweak(table: BlockBasedOptions, _: Options) -> None:
        table.set_checksum_type(getattr(ChecksumType, checksum)())

    with pytest.raises(UnsupportedFormat):
        _write(tmp_path / "t.sst", tweak)


def test_bloom_filter_block_is_ignored(tmp_path: Path) -> None:
    _check(_write(tmp_path / "t.sst", lambda table, _: table.set_bloom_filter(10, False)))


def test_compressed_blocks_are_unsupported(tmp_path: Path) -> None:
    def tweak(_: BlockBasedOptions, options: Options) -> None:
        options.set_compression_type(DBCompressionType.snappy())

    compressible = [(k, b"a" * 200) for k, _ in ITEMS]
    with pytest.raises(UnsupportedFormat):
        _write(tmp_path / "t.sst", tweak, compressible).read_all()


def test_data_block_hash_index_is_unsupported(tmp_path: Path) -> None:
    def tweak(table: BlockBasedOptions, _: Options) -> None:
        table.set_data_block_index_type(DataBlockIndexType.binary_and_hash())

    with pytest.raises(UnsupportedFormat):
        _write(tmp_path / "t.sst", tweak).read_all()


def test_two_level_index_is_unsupported(tmp_path: Path) -> None:
    def tweak(table: BlockBasedOptions, _: Options) -> None:
        table.set_index_type(BlockBasedIndexType.two_level_index_search())

    with pytest.raises(UnsupportedFormat):
        _write(tmp_path / "t.sst", tweak)


def test_deletions_are_unsupported(tmp_path: Path) -> None:
    options = Options(raw_mode=True)
    writer = SstFileWriter(options=options)
    path = tmp_path / "t.sst"
    writer.open(str(path))
    writer[b"a"] = b"1"
    del writer[b"b"]
    writer.finish()
    with pytest.raises(UnsupportedFormat):
        SstReader.open(path)


def test_unchecked_footer_padding_before_v6_never_yields_wrong_data(tmp_path: Path) -> None:
    reader = _write(tmp_path / "t.sst", lambda table, _: table.set_format_version(5))
    data = (tmp_path / "t.sst").read_bytes()
    for pos in range(len(data) - 53, len(data)):
        damaged = bytearray(data)
        damaged[pos] ^= 0x20
        try:
            keys, values = SstReader.from_bytes(bytes(damaged)).read_all()
        except CorruptFile:
            continue
        assert (keys, values) == reader.read_all()
