"""The two-level iterator: headers, records, next_range skipping, seek_ge -- against a list."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graveler.core.model import RangeSettings
from graveler.storage.committed.iterator import TreeIterator
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
    from graveler.storage.committed.diff import DiffType

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


@given(
    common=st.integers(1, 300),
    tails=st.tuples(st.lists(st.sampled_from("xyz"), max_size=5), st.lists(st.just("w"))),
    offsets=st.tuples(st.integers(0, 3), st.integers(0, 3)),
)
def test_shared_run_is_the_length_of_the_equal_run(common, tails, offsets):
    """The galloping search agrees with a plain step-by-step count, whether the run ends at a
    mismatch or at the end of either list (equal IDs need not be the same object)."""
    from graveler.storage.committed.diff import _shared_run

    run = [f"id-{n}" for n in range(common)]
    a = ["pre"] * offsets[0] + run + list(tails[0])
    b = ["other"] * offsets[1] + ["".join(["i", s[1:]]) for s in run] + list(tails[1])
    i, j = offsets
    want = 0
    while i + want < len(a) and j + want < len(b) and a[i + want] == b[j + want]:
        want += 1
    assert _shared_run(a, b, i, j) == want
