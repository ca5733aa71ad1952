"""SstReader agrees with a sorted-dict model on files written by SstWriter (and by RocksDB's
own reader after ingestion)."""

from __future__ import annotations

import tempfile
from bisect import bisect_left
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graveler.storage.sstable import SstReader

from .helpers import ingest_and_dump, write_sst

# Bytes that stress ordering and varint/prefix edge cases.
_EDGE_BYTES = st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF, ord("a"), ord("/")])
_binary_keys = st.lists(_EDGE_BYTES, max_size=12).map(bytes)
_prefixed_keys = st.builds(
    lambda prefix, suffix: prefix + suffix,
    st.sampled_from([b"", b"p" * 40, b"data/tables/events/partition=2024-01-01/" * 4]),
    st.binary(max_size=6),
)
_keys = st.one_of(_binary_keys, _prefixed_keys, st.binary(max_size=40))
_values = st.one_of(st.just(b""), st.binary(max_size=40), st.binary(min_size=100, max_size=400))
_models = st.dictionaries(_keys, _values, min_size=1, max_size=250)
_block_sizes = st.sampled_from([1, 64, 256, 4096])


def _check_against_model(reader: SstReader, model: dict[bytes, bytes], probes: list[bytes]) -> None:
    items = sorted(model.items())
    keys = [k for k, _ in items]
    assert reader.read_all() == (keys, [v for _, v in items])
    assert list(reader) == items
    assert reader.num_entries == len(items)
    for key, value in items:
        assert reader.get(key) == value
    last = keys[-1]
    for probe in [*probes, b"", last + b"\x00", last + b"\xff" * 3, b"\xff" * 50]:
        assert reader.get(probe) == model.get(probe)
        assert list(reader.seek_ge(probe)) == items[bisect_left(keys, probe) :]
    for key in keys[:: max(1, len(keys) // 7)]:
        assert list(reader.seek_ge(key)) == items[bisect_left(keys, key) :]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=_models, probes=st.lists(_keys, max_size=10), block_size=_block_sizes)
def test_reader_matches_model(
    model: dict[bytes, bytes], probes: list[bytes], block_size: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.sst"
        write_sst(path, sorted(model.items()), block_size=block_size)
        reader = SstReader.open(path)
        _check_against_model(reader, model, probes)
        assert ingest_and_dump(path) == sorted(model.items())


def test_many_blocks_single_file(tmp_path: Path) -> None:
    model = {b"k/%08d/" % (i * 7) + b"x" * (i % 50): b"v%d" % i * (i % 40) for i in range(5000)}
    path = tmp_path / "t.sst"
    write_sst(path, sorted(model.items()), block_size=512)
    reader = SstReader.open(path)
    assert reader.num_blocks > 100
    probes = [b"k/%08d/" % i for i in range(0, 35000, 997)]
    _check_against_model(reader, model, probes)


def test_single_entry_file(tmp_path: Path) -> None:
    path = tmp_path / "t.sst"
    write_sst(path, [(b"only", b"value")])
    reader = SstReader.from_bytes(path.read_bytes())
    _check_against_model(reader, {b"only": b"value"}, [b"a", b"only", b"onlz", b"z"])


def test_keys_sharing_trailer_bytes(tmp_path: Path) -> None:
    # Internal keys end in 01 00*7: a key extending the previous one with those bytes shares
    # part of the previous key's trailer, which takes the reader's slow path.
    keys = [b"", b"\x01", b"\x01\x00", b"\x01\x00\x00\x00", b"a", b"a\x01", b"a\x01\x00\x00"]
    model = {k: b"v" + k for k in keys}
    path = tmp_path / "t.sst"
    write_sst(path, sorted(model.items()), block_size=1)
    _check_against_model(SstReader.open(path), model, [b"\x00", b"\x01\x00\x00", b"a\x00"])
    write_sst(path, sorted(model.items()))
    _check_against_model(SstReader.open(path), model, [b"\x00", b"\x01\x00\x00", b"a\x00"])


def test_large_values_and_long_keys(tmp_path: Path) -> None:
    model = {
        b"k" * 300 + bytes([i]): bytes([i]) * (70000 if i % 3 == 0 else 200) for i in range(20)
    }
    path = tmp_path / "t.sst"
    write_sst(path, sorted(model.items()), block_size=4096)
    _check_against_model(SstReader.open(path), model, [b"k" * 300, b"k" * 301])
