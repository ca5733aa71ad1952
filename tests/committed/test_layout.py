"""Tree layout v2: a commit copies the blocks no change falls in, and the tree it gives is the
one a from-scratch write of the same records gives (same metarange ID); what is copied and
what is decoded again agree; files of layout v1 stay readable and are rewritten as v2 when a
commit touches them; damaged or inconsistent files are refused."""

from __future__ import annotations

import hashlib
import random
import struct
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graveler.core.errors import CorruptFile
from graveler.core.model import RangeSettings
from graveler.storage.committed import splitter
from graveler.storage.committed.apply import Change, apply_changes
from graveler.storage.committed.cache import TieredCache
from graveler.storage.committed.files import TREE_PREFIX, TreeFiles, decode_range_file
from graveler.storage.committed.layout import BLOCKS_PROPERTY
from graveler.storage.committed.record import (
    RANGE_KIND,
    RangeInfo,
    ValueRecord,
    encode_values,
    file_id,
)
from graveler.storage.committed.splitter import DEFAULT_RANGE_SETTINGS
from graveler.storage.objectstore import open_object_store
from graveler.storage.sstable import SstReader
from graveler.storage.sstable.format import (
    context_modifier,
    parse_footer,
    parse_handle,
    parse_meta_block,
    read_fixed32,
)
from tests.committed.conftest import make_record

#: Ranges of a few kilobytes with blocks of a few hundred bytes: many blocks a range.
SMALL = RangeSettings(min_size=2000, max_size=8000, raggedness=97)


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(splitter, "BLOCK_MIN", 200)
    monkeypatch.setattr(splitter, "BLOCK_MODULUS", 4)
    monkeypatch.setattr(splitter, "BLOCK_MAX", 1500)


def _files() -> TreeFiles:
    return TreeFiles(open_object_store(f"mem://layout-{random.random()}"), TieredCache(None))


def _scratch(files: TreeFiles, which: RangeSettings, records: dict[bytes, ValueRecord]) -> str:
    changes = [Change(k, records[k]) for k in sorted(records)]
    return apply_changes(files, which, [], changes)[0]


def _tree(files: TreeFiles, mid: str) -> list[ValueRecord]:
    out = []
    for rng in files.metarange(mid).ranges:
        out += files.range(rng.id).records
    return out


edits = st.lists(
    st.tuples(st.integers(min_value=0, max_value=1999), st.sampled_from(["put", "delete"])),
    min_size=1,
    max_size=30,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=edits, seed=st.integers(min_value=0, max_value=10**6))
def test_commits_copy_blocks_and_give_the_canonical_tree(small_blocks, edits, seed):
    rng = random.Random(seed)
    base = {b"k/%06d" % (i * 3): make_record(b"k/%06d" % (i * 3), str(i)) for i in range(700)}
    files = _files()
    base_id = _scratch(files, SMALL, base)
    after = dict(base)
    changes = {}
    for n, how in edits:
        key = b"k/%06d" % n
        if how == "delete" and key in after:
            del after[key]
            changes[key] = None
        elif how == "put":
            after[key] = changes[key] = make_record(key, f"{n}-{rng.random()}")
    stream = [Change(k, changes[k]) for k in sorted(changes)]
    mid, summary = apply_changes(files, SMALL, files.metarange(base_id).ranges, stream)
    assert mid == _scratch(_files(), SMALL, after)
    assert _tree(files, mid) == [after[k] for k in sorted(after)]
    assert summary.blocks_copied > 0 or summary.ranges_written <= 2
    _check_redecoded(files, mid)


def _check_redecoded(files: TreeFiles, mid: str) -> None:
    """Each range decoded from its stored bytes equals the one the writer cached."""
    for rng in files.metarange(mid).ranges:
        cached = files.range(rng.id)
        fresh = decode_range_file(rng.id, files.store.get(TREE_PREFIX + rng.id))
        assert (fresh.keys, fresh.records, fresh.fingerprints) == (
            cached.keys,
            cached.records,
            cached.fingerprints,
        )
        assert fresh.nbytes == cached.nbytes == rng.size
        assert len(fresh.keys) == rng.num_records
        assert (fresh.keys[0], fresh.keys[-1]) == (rng.min_key, rng.max_key)


def test_a_one_key_commit_copies_nearly_all_of_its_range():
    records = {}
    for i in range(20_000):
        key = f"lake/data/{hashlib.md5(str(i).encode()).hexdigest()}.parquet".encode()
        records[key] = make_record(key, str(i))
    files = _files()
    base_id = _scratch(files, DEFAULT_RANGE_SETTINGS, records)
    key = sorted(records)[9_999]
    changed = make_record(key, "new")
    ranges = files.metarange(base_id).ranges
    mid, summary = apply_changes(files, DEFAULT_RANGE_SETTINGS, ranges, [Change(key, changed)])
    assert (summary.changed, summary.ranges_written) == (1, 1)
    written = next(r for r in files.metarange(mid).ranges if r.min_key <= key <= r.max_key)
    blocks = len(files.range(written.id).layout or ())
    assert summary.blocks_copied >= blocks - 2 > 10
    assert mid == _scratch(_files(), DEFAULT_RANGE_SETTINGS, {**records, key: changed})
    _check_redecoded(files, mid)


def test_blocks_copied_from_files_read_back_give_the_same_tree(small_blocks):
    """A process whose cache is empty reads the range it rewrites from the store and still
    copies its blocks."""
    store = open_object_store("mem://layout-cold")
    records = {b"k/%05d" % i: make_record(b"k/%05d" % i, str(i)) for i in range(900)}
    warm = TreeFiles(store, TieredCache(None))
    base_id = _scratch(warm, SMALL, records)
    cold = TreeFiles(store, TieredCache(None))
    key = b"k/00450"
    changed = make_record(key, "other")
    mid, summary = apply_changes(
        cold, SMALL, cold.metarange(base_id).ranges, [Change(key, changed)]
    )
    assert summary.blocks_copied > 0
    assert mid == _scratch(_files(), SMALL, {**records, key: changed})
    _check_redecoded(cold, mid)


def _write_v1_tree(files: TreeFiles, records: list[ValueRecord], per_range: int) -> str:
    """A tree as the earlier writer stored it: RocksDB's own files, IDs over framed records."""
    from graveler.storage.sstable.writer import table_bytes

    infos = []
    for i in range(0, len(records), per_range):
        chunk = records[i : i + per_range]
        keys = [r.key for r in chunk]
        values = encode_values(chunk)
        rid = file_id(RANGE_KIND, keys, values)
        files.store.put(TREE_PREFIX + rid, table_bytes(keys, values, tempfile.gettempdir()))
        size = sum(map(len, keys)) + sum(map(len, values))
        infos.append(RangeInfo(rid, keys[0], keys[-1], len(keys), size))
    return files.write_metarange(infos)


def test_layout_v1_trees_are_read_and_rewritten_as_v2(small_blocks):
    records = [make_record(b"k/%05d" % i, str(i)) for i in range(600)]
    files = _files()
    old = _write_v1_tree(files, records, per_range=150)
    assert _tree(files, old) == records
    assert all(files.range(r.id).layout is None for r in files.metarange(old).ranges)
    key = records[200].key
    changed = make_record(key, "v2 now")
    mid, summary = apply_changes(files, SMALL, files.metarange(old).ranges, [Change(key, changed)])
    expected = {r.key: r for r in records} | {key: changed}
    assert _tree(files, mid) == [expected[k] for k in sorted(expected)]
    touched = [r for r in files.metarange(mid).ranges if files.range(r.id).layout is not None]
    assert touched and summary.ranges_reused >= 1
    _check_redecoded(files, mid)


def _stored_range(files: TreeFiles, mid: str) -> tuple[str, bytearray]:
    rid = files.metarange(mid).ranges[0].id
    return rid, bytearray(files.store.get(TREE_PREFIX + rid))


def _reseal(data: bytearray, offset: int, size: int) -> None:
    """Recompute block ``(offset, size)``'s checksum, as a forger would."""
    import xxhash

    reader_base = read_fixed32(bytes(data), len(data) - 53 + 9)
    raw = xxhash.xxh3_64_intdigest(bytes(data[offset : offset + size])) & 0xFFFFFFFF
    stored = (raw + context_modifier(reader_base, offset)) & 0xFFFFFFFF
    data[offset + size + 1 : offset + size + 5] = struct.pack("<I", stored)


def test_an_entry_changed_under_a_valid_checksum_is_refused(small_blocks):
    files = _files()
    mid = _scratch(files, SMALL, {b"k/%04d" % i: make_record(b"k/%04d" % i) for i in range(300)})
    rid, data = _stored_range(files, mid)
    offset, size = SstReader.from_bytes(bytes(data)).block_handles()[0][1]
    data[offset + 6] ^= 0x01  # a byte of the second block's first key
    _reseal(data, offset, size)
    with pytest.raises(CorruptFile, match=r"hashes to|does not hold"):
        decode_range_file(rid, bytes(data))
    data[offset + 6] ^= 0x01
    data[offset + size + 2] ^= 0x01  # the checksum itself
    with pytest.raises(CorruptFile):
        decode_range_file(rid, bytes(data))


def test_a_block_table_that_does_not_match_the_blocks_is_refused(small_blocks):
    files = _files()
    mid = _scratch(files, SMALL, {b"k/%04d" % i: make_record(b"k/%04d" % i) for i in range(300)})
    rid, data = _stored_range(files, mid)
    reader = SstReader.from_bytes(bytes(data))
    table = reader.properties[BLOCKS_PROPERTY]
    assert table[0] > 1
    # the same file with a block table whose first block is one entry short, resealed
    at = bytes(data).index(table)
    data[at] -= 1
    footer = parse_footer(bytes(data))
    metaindex = dict(parse_meta_block(bytes(data), *footer.metaindex_handle))
    _reseal(data, *parse_handle(metaindex[b"rocksdb.properties"]))
    with pytest.raises(CorruptFile, match="does not hold what its table says"):
        decode_range_file(rid, bytes(data))
