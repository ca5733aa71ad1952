"""Model-based tests: the committed tree against a plain dict.

Trees are built and changed with random change sets under several range settings (including
tiny ``max_size`` so almost every record is its own range); every read (get, get_many, iterate
with start/prefix), diff and merge must agree with the same operations on dicts.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graveler.core.errors import MergeConflict
from graveler.core.model import RangeSettings
from graveler.storage.committed.apply import Change
from graveler.storage.committed.cache import TieredCache
from graveler.storage.committed.diff import DiffType
from graveler.storage.committed.manager import CommittedManager
from graveler.storage.committed.merge import MergeStrategy
from tests.committed.conftest import make_record

SETTINGS = [
    RangeSettings(min_size=0, max_size=1, raggedness=1),  # one record per range
    RangeSettings(min_size=0, max_size=200, raggedness=3),
    RangeSettings(min_size=150, max_size=600, raggedness=4),
    RangeSettings(min_size=0, max_size=1 << 20, raggedness=1 << 30),  # one big range
]

keys = st.binary(min_size=1, max_size=6).map(lambda b: b"k/" + b)
contents = st.sampled_from([b"a", b"b", b"c"])
trees = st.dictionaries(keys, contents, max_size=60)
change_sets = st.dictionaries(keys, st.one_of(st.none(), contents), max_size=25)
HYP = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

Model = dict[bytes, bytes]


def build(cm: CommittedManager, model: Model) -> str:
    mid, _ = cm.write_records(make_record(k, model[k]) for k in sorted(model))
    return mid


def as_model(cm: CommittedManager, mid: str) -> Model:
    inv = {make_record(b"x", c).identity: c for c in (b"a", b"b", b"c")}
    return {r.key: inv[r.identity] for r in cm.iterate(mid)}


def applied(model: Model, changes: dict[bytes, bytes | None]) -> Model:
    out = dict(model)
    for k, v in changes.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def to_changes(changes: dict[bytes, bytes | None]) -> list[Change]:
    return [Change(k, None if v is None else make_record(k, v)) for k, v in sorted(changes.items())]


@HYP
@given(model=trees, changes=change_sets, which=st.sampled_from(SETTINGS))
def test_apply_matches_model_and_is_history_independent(
    manager_factory: Callable[..., CommittedManager], model, changes, which
):
    cm = manager_factory(which)
    base = build(cm, model)
    new, summary = cm.apply(base, to_changes(changes))
    want = applied(model, changes)
    assert as_model(cm, new) == want
    assert new == build(cm, want)  # same records => same metarange ID, whatever the history
    assert summary.changes == sum(
        1
        for k, v in changes.items()
        if (v is None and k in model) or (v is not None and model.get(k) != v)
    )


@HYP
@given(model=trees, probes=st.lists(keys, max_size=20), which=st.sampled_from(SETTINGS))
def test_lookups_match_model(manager_factory, model, probes, which):
    cm = manager_factory(which)
    mid = build(cm, model)
    probes = probes + list(model)[:10]
    for k in probes:
        rec = cm.get(mid, k)
        assert (rec is not None) == (k in model)
        if rec is not None:
            assert rec.identity == make_record(k, model[k]).identity
    want = [k if k in model else None for k in probes]
    import graveler.storage.committed.manager as manager_module

    saved = manager_module.WHOLE_INDEX_RATIO
    try:
        for ratio in (0, 10**9):  # per-range grouping, then the whole-tree index
            manager_module.WHOLE_INDEX_RATIO = ratio
            found = cm.get_many(mid, probes)
            assert [r.key if r else None for r in found] == want
    finally:
        manager_module.WHOLE_INDEX_RATIO = saved


@HYP
@given(model=trees, start=keys, prefix=st.binary(max_size=3).map(lambda b: b"k/" + b))
def test_iterate_from_and_prefix_match_model(manager_factory, model, start, prefix):
    cm = manager_factory(SETTINGS[1])
    mid = build(cm, model)
    got = [r.key for r in cm.iterate(mid, start=start)]
    assert got == sorted(k for k in model if k >= start)
    got = [r.key for r in cm.iterate(mid, prefix=prefix)]
    assert got == sorted(k for k in model if k.startswith(prefix))


def model_diff(left: Model, right: Model, prefix: bytes = b"") -> list[tuple[DiffType, bytes]]:
    want = []
    for k in sorted(set(left) | set(right)):
        if not k.startswith(prefix):
            continue
        if k not in right:
            want.append((DiffType.REMOVED, k))
        elif k not in left:
            want.append((DiffType.ADDED, k))
        elif left[k] != right[k]:
            want.append((DiffType.CHANGED, k))
    return want


@HYP
@given(left=trees, changes=change_sets, which=st.sampled_from(SETTINGS))
def test_diff_matches_model(manager_factory, left, changes, which):
    cm = manager_factory(which)
    right = applied(left, changes)
    lid, rid = build(cm, left), build(cm, right)
    assert [(e.type, e.key) for e in cm.diff(lid, rid)] == model_diff(left, right)


@HYP
@given(
    left=trees,
    changes=change_sets,
    which=st.sampled_from(SETTINGS),
    prefix=st.binary(min_size=0, max_size=2).map(lambda b: b"k/" + b),
)
def test_diff_under_a_prefix_matches_model(manager_factory, left, changes, which, prefix):
    cm = manager_factory(which)
    right = applied(left, changes)
    lid, rid = build(cm, left), build(cm, right)
    got = [(e.type, e.key) for e in cm.diff(lid, rid, prefix)]
    assert got == model_diff(left, right, prefix)


@HYP
@given(
    left=trees,
    changes=change_sets,
    which=st.sampled_from(SETTINGS),
    prefix=st.sampled_from([b"", b"k/", b"k/a"]),
    start=st.binary(min_size=0, max_size=3).map(lambda b: b"k/" + b if b else b""),
)
def test_diff_from_a_start_key_matches_model(manager_factory, left, changes, which, prefix, start):
    """Paging: the diff from ``start`` on is the model's diff without the keys below it."""
    cm = manager_factory(which)
    right = applied(left, changes)
    lid, rid = build(cm, left), build(cm, right)
    got = [(e.type, e.key) for e in cm.diff(lid, rid, prefix, start)]
    assert got == [(t, k) for t, k in model_diff(left, right, prefix) if k >= start]


def test_diff_under_a_prefix_reads_only_the_ranges_under_it(manager_factory):
    """A change under one prefix of a wide tree is found without opening the ranges of the
    other prefixes: the cut happens in the metarange, not after a full diff."""
    cm = manager_factory(SETTINGS[1])
    left = {f"k/{p}/{i:04d}".encode(): b"a" for p in "abcdefgh" for i in range(200)}
    right = {**left, b"k/a/0007": b"b"}
    right.update({f"k/{p}/0100".encode(): b"c" for p in "bcdefgh"})  # changes elsewhere
    lid, rid = build(cm, left), build(cm, right)
    opened: list[str] = []
    real = cm.files.range

    def counting(range_id: str):
        opened.append(range_id)
        return real(range_id)

    cm.files.range = counting  # type: ignore[method-assign]
    got = [(e.type, e.key) for e in cm.diff(lid, rid, b"k/a/")]
    assert got == [(DiffType.CHANGED, b"k/a/0007")]
    near_a = {
        r.id
        for tree in (lid, rid)
        for r in cm.ranges(tree)
        if r.min_key <= b"k/b/" and r.max_key >= b"k/a/"  # under k/a/ or on its boundary
    }
    assert opened and set(opened) <= near_a


def model_merge(base: Model, src: Model, dst: Model, strategy: MergeStrategy):
    out, conflicts = dict(dst), []
    for k in sorted(set(base) | set(src) | set(dst)):
        b, s, d = base.get(k), src.get(k), dst.get(k)
        if s in (b, d):
            continue
        if d == b or strategy is MergeStrategy.SOURCE_WINS:
            if s is None:
                out.pop(k, None)
            else:
                out[k] = s
        elif strategy is MergeStrategy.NONE:
            conflicts.append(k)
    return out, conflicts


@HYP
@given(
    base=trees,
    src_changes=change_sets,
    dst_changes=change_sets,
    strategy=st.sampled_from(list(MergeStrategy)),
    which=st.sampled_from(SETTINGS),
)
def test_merge_matches_model(manager_factory, base, src_changes, dst_changes, strategy, which):
    cm = manager_factory(which)
    src, dst = applied(base, src_changes), applied(base, dst_changes)
    want, conflicts = model_merge(base, src, dst, strategy)
    bid, sid, did = build(cm, base), build(cm, src), build(cm, dst)
    try:
        merged, _ = cm.merge(bid, sid, did, strategy)
    except MergeConflict as err:
        assert conflicts, "merge raised a conflict the model does not have"
        assert err.keys == [k.decode("utf-8", "replace") for k in conflicts]
        return
    assert not conflicts, f"model expects conflicts on {conflicts}"
    assert as_model(cm, merged) == want
    assert merged == build(cm, want)


@HYP
@given(
    history=st.lists(change_sets, min_size=1, max_size=6),
    which=st.sampled_from(SETTINGS[1:3]),
)
def test_any_commit_sequence_gives_the_canonical_tree(manager_factory, history, which):
    """Property: the metarange ID is a function of the final records only."""
    cm = manager_factory(which)
    mid, model = build(cm, {}), {}
    for changes in history:
        mid, _ = cm.apply(mid, to_changes(changes))
        model = applied(model, changes)
    assert mid == build(cm, model)


BIG_RANGES = [
    RangeSettings(min_size=0, max_size=1 << 22, raggedness=1 << 30),  # one range of every key
    RangeSettings(min_size=4096, max_size=1 << 16, raggedness=64),
]
ops = st.lists(
    st.tuples(st.integers(0, 1999), st.sampled_from(["change", "remove", "insert", "metadata"])),
    max_size=40,
)


@HYP
@given(edits=ops, which=st.sampled_from(BIG_RANGES), decoded=st.booleans())
def test_diff_of_long_ranges_matches_model(manager_factory, store, edits, which, decoded):
    """Long ranges with sparse edits exercise the fingerprint search (prefix / suffix trimming
    and key splits); a metadata-only change (same identity, new value) is no difference."""
    base = {b"k/%06d" % (2 * i): make_record(b"k/%06d" % (2 * i), b"a") for i in range(2000)}
    new = dict(base)
    for pos, op in edits:
        key = b"k/%06d" % (2 * pos)
        if op == "change":
            new[key] = make_record(key, b"b")
        elif op == "remove":
            new.pop(key, None)
        elif op == "insert":
            new[key + b"+"] = make_record(key + b"+", b"c")
        elif key in new:
            rec = new[key]
            new[key] = rec._replace(value=rec.value + b";meta")
    cm = manager_factory(which)
    lid, _ = cm.write_records(base[k] for k in sorted(base))
    rid, _ = cm.write_records(new[k] for k in sorted(new))
    if decoded:  # ranges decoded from stored bytes, not the objects the writer kept
        cm = CommittedManager(store, TieredCache(None), which)
    got = [(e.type, e.key) for e in cm.diff(lid, rid)]
    want = []
    for k in sorted(set(base) | set(new)):
        if k not in new:
            want.append((DiffType.REMOVED, k))
        elif k not in base:
            want.append((DiffType.ADDED, k))
        elif base[k].identity != new[k].identity:
            want.append((DiffType.CHANGED, k))
    assert got == want
