"""The two-level iterator: headers, records, next_range skipping, seek_ge -- against a list."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graveler.committed.iterator import TreeIterator
from graveler.model import RangeSettings
from tests.committed.conftest import make_record

SETTINGS = RangeSettings(min_size=0, max_size=150, raggedness=3)


def test_headers_then_records_and_skip(manager_factory):
    cm = manager_factory(SETTINGS)
    keys = [f"k{i:03d}".encode() for i in range(60)]
    mid, _ = cm.write_records(make_record(k) for k in keys)
    ranges = cm.ranges(mid)
    assert len(ranges) > 3
    it = TreeIterator(cm.files, ranges)
    assert it.header == ranges[0] and it.record is None
    it.next_range()  # skip range 0 without opening it
    assert it.header == ranges[1]
    it.next()
    assert it.record is not None and it.record.key == ranges[1].min_key
    seen = [r.key for r in it.records()]
    assert seen == [k for k in keys if k >= ranges[1].min_key]
    assert not it.valid


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    keys=st.sets(st.binary(min_size=1, max_size=4), max_size=40),
    probe=st.binary(max_size=5),
)
def test_seek_ge_matches_sorted_list(manager_factory, keys, probe):
    cm = manager_factory(SETTINGS)
    ordered = sorted(keys)
    mid, _ = cm.write_records(make_record(k) for k in ordered)
    it = TreeIterator(cm.files, cm.ranges(mid))
    it.seek_ge(probe)
    assert [r.key for r in it.records()] == [k for k in ordered if k >= probe]


def test_diff_of_equal_length_ranges_whose_keys_diverge(manager_factory):
    """Same-length ranges are compared position by position until keys diverge; the rest must
    still be diffed by key (a removal and an addition keep the length equal)."""
    from graveler.committed.diff import DiffType

    cm = manager_factory(RangeSettings(min_size=0, max_size=1 << 20, raggedness=1 << 30))
    left = {b"a": "1", b"b": "1", b"c": "1", b"d": "1", b"f": "1"}
    right = {b"a": "1", b"b": "2", b"cc": "1", b"d": "1", b"f": "2"}
    lid, _ = cm.write_records(make_record(k, v) for k, v in sorted(left.items()))
    rid, _ = cm.write_records(make_record(k, v) for k, v in sorted(right.items()))
    got = [(e.type, e.key) for e in cm.diff(lid, rid)]
    assert got == [
        (DiffType.CHANGED, b"b"),
        (DiffType.REMOVED, b"c"),
        (DiffType.ADDED, b"cc"),
        (DiffType.CHANGED, b"f"),
    ]
