"""The Python table builder (graveler sstable layout v2): what it writes reads back through our
reader and through RocksDB itself, blocks copied from another file verify at their new
offsets, and the same blocks always give the same bytes."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graveler.core.errors import CorruptFile
from graveler.storage.sstable import FORMAT_VERSION, SstReader
from graveler.storage.sstable.builder import (
    TableBuilder,
    encode_block,
    entry_sizes,
    table_properties,
)
from graveler.storage.sstable.format import CHECKSUM_XXH3
from tests.sstable.helpers import ingest_and_dump

Items = list[tuple[bytes, bytes]]


def _items(n: int, seed: int = 0, value_size: int = 40) -> Items:
    rng = random.Random(seed)
    keys = sorted({rng.randbytes(rng.randint(1, 24)) for _ in range(n)})
    return [(k, rng.randbytes(rng.randint(0, value_size))) for k in keys]


def _blocks(items: Items, cuts: list[int]) -> list[Items]:
    bounds = sorted({0, len(items), *(c for c in cuts if 0 < c < len(items))})
    return [items[a:b] for a, b in itertools.pairwise(bounds)]


def _build(blocks: list[Items], base: int = 7) -> bytes:
    builder = TableBuilder(base)
    for block in blocks:
        keys = [k for k, _ in block]
        values = [v for _, v in block]
        builder.add(encode_block(keys, values, entry_sizes(keys, values)).data, keys[-1])
    total = [kv for block in blocks for kv in block]
    props = table_properties(
        len(total), sum(len(k) for k, _ in total), sum(len(v) for _, v in total)
    )
    return builder.finish(props)


def _check(data: bytes, items: Items, tmp_path: Path) -> None:
    reader = SstReader.from_bytes(data)
    keys, values = reader.read_all()
    assert list(zip(keys, values, strict=True)) == items
    for key, value in items[:: max(1, len(items) // 20)]:
        assert reader.get(key) == value
        assert reader.get(key + b"\x00") in (None, dict(items).get(key + b"\x00"))
    middle = items[len(items) // 2][0]
    assert list(reader.seek_ge(middle)) == [kv for kv in items if kv[0] >= middle]
    sst = tmp_path / "t.sst"
    sst.write_bytes(data)
    assert ingest_and_dump(sst) == items


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=400),
    seed=st.integers(min_value=0, max_value=10**6),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_built_tables_read_back_here_and_in_rocksdb(tmp_path_factory, n, seed, cuts):
    items = _items(n, seed)
    _check(_build(_blocks(items, cuts)), items, tmp_path_factory.mktemp("b"))


def test_long_keys_and_values_use_wide_varints(tmp_path):
    items = [(b"a" * 20_000, b"v" * 70_000), (b"b", b""), (b"c" * 130, b"w" * 16_384)]
    sizes = entry_sizes([k for k, _ in items], [v for _, v in items])
    block = encode_block([k for k, _ in items], [v for _, v in items], sizes)
    assert block.entries_end == sum(sizes)
    _check(_build([items]), items, tmp_path)


def test_copied_blocks_verify_at_their_new_offsets(tmp_path):
    items = _items(600, seed=3)
    source_blocks = _blocks(items, list(range(0, 600, 37)))
    source = _build(source_blocks, base=0x1234)
    reader = SstReader.from_bytes(source)
    handles, last_keys = reader.block_handles()
    # a new table: a new block first (so every copied block moves), then the source's
    # blocks 1.. copied, the second of them replaced by a new one
    builder = TableBuilder(0xCAFE)
    head = [(k, v + b"longer") for k, v in source_blocks[0]]
    builder.add(encode_block(*_columns(head)).data, head[-1][0])
    expected = list(head)
    for i in range(1, len(handles)):
        if i == 2:
            keys, values, sizes = _columns(source_blocks[i])
            builder.add(encode_block(keys, values, sizes).data, keys[-1])
        else:
            reader.verify_block(i)
            builder.copy(source, [handles[i]], reader.base_context_checksum, [last_keys[i]])
        expected += source_blocks[i]
    data = builder.finish(table_properties(len(expected), 0, 0))
    assert data[:100] != source[:100]
    _check(data, expected, tmp_path)


def _columns(items: Items) -> tuple[list[bytes], list[bytes], list[int]]:
    keys = [k for k, _ in items]
    values = [v for _, v in items]
    return keys, values, entry_sizes(keys, values)


def test_the_same_blocks_give_the_same_bytes():
    items = _items(300, seed=5)
    blocks = _blocks(items, [50, 120, 121, 250])
    assert _build(blocks) == _build(blocks)
    assert _build(blocks, base=8) != _build(blocks, base=7)
    assert (
        SstReader.from_bytes(_build(blocks, base=8)).read_all()
        == SstReader.from_bytes(_build(blocks, base=7)).read_all()
    )


def test_a_copied_block_with_a_bad_checksum_is_caught_at_its_new_place(tmp_path):
    items = _items(200, seed=9)
    source = bytearray(_build(_blocks(items, [100])))
    reader = SstReader.from_bytes(bytes(source))
    (first, _), (second, second_size) = reader.block_handles()[0]
    source[second + 3] ^= 0xFF  # damage block 1 without verifying it
    builder = TableBuilder(99)
    base = reader.base_context_checksum
    builder.copy(bytes(source), [(second, second_size)], base, [items[-1][0]])
    copied = builder.finish(table_properties(100, 0, 0))
    with pytest.raises(CorruptFile):
        SstReader.from_bytes(copied).read_all()
    assert first == 0


def test_layout_v2_is_pinned():
    reader = SstReader.from_bytes(_build([_items(50)]))
    assert FORMAT_VERSION == 2
    assert (reader.format_version, reader.checksum_type) == (6, CHECKSUM_XXH3)
    assert reader.properties["rocksdb.comparator"] == b"leveldb.BytewiseComparator"
    assert reader.properties["rocksdb.compression"] == b"NoCompression"


def test_the_base_context_checksum_must_be_nonzero_32_bits():
    for bad in (0, 1 << 32, -1):
        with pytest.raises(ValueError):
            TableBuilder(bad)
