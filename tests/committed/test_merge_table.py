"""Golden tests: every row of the seed documents' three-way merge table, and both strategies.

Each row is checked on a tree where the key sits among other keys (so range machinery is
exercised), with "X" meaning the key is absent.
"""

from __future__ import annotations

import pytest

from graveler.core.errors import MergeConflict
from graveler.storage.committed.apply import Change
from graveler.storage.committed.manager import CommittedManager
from tests.committed.conftest import make_record

KEY = b"data/k050"
FILLER = [f"data/k{i:03d}".encode() for i in range(100) if i != 50]

# (base, source, dest, result) -- "X" is a missing file, "conflict" a merge failure.
TABLE = [
    ("A", "A", "A", "A"),  # unchanged
    ("A", "B", "B", "B"),  # changed on both sides the same way
    ("A", "B", "C", "conflict"),  # changed on both sides differently
    ("A", "A", "B", "B"),  # changed only on dest
    ("A", "B", "A", "B"),  # changed only on source
    ("A", "X", "X", "X"),  # deleted on both sides
    ("A", "B", "X", "conflict"),  # changed on source, deleted on dest
    ("A", "X", "B", "conflict"),  # deleted on source, changed on dest
    ("A", "A", "X", "X"),  # deleted on dest
    ("A", "X", "A", "X"),  # deleted on source
]


def tree(cm: CommittedManager, content: str, extra: bytes = b"") -> str:
    """A tree of the filler keys plus KEY holding ``content`` (absent when "X").

    ``extra`` adds one key unique to this side so that base, source and dest always differ
    (no trivial fast path)."""
    records = {k: make_record(k, b"filler") for k in FILLER}
    if content != "X":
        records[KEY] = make_record(KEY, content)
    if extra:
        records[extra] = make_record(extra, extra)
    mid, _ = cm.write_records(records[k] for k in sorted(records))
    return mid


def contents(cm: CommittedManager, mid: str) -> dict[bytes, bytes]:
    return {r.key: r.identity for r in cm.iterate(mid)}


@pytest.mark.parametrize(("base", "source", "dest", "result"), TABLE)
def test_merge_table_row(cm: CommittedManager, base: str, source: str, dest: str, result: str):
    b = tree(cm, base)
    s = tree(cm, source, extra=b"data/source-only")
    d = tree(cm, dest, extra=b"data/dest-only")
    if result == "conflict":
        with pytest.raises(MergeConflict) as err:
            cm.merge(b, s, d)
        assert err.value.keys == [KEY.decode()]
        return
    merged, _ = cm.merge(b, s, d)
    expected = tree(cm, result, extra=b"data/dest-only")
    expected, _ = cm.apply(
        expected,
        [Change(b"data/source-only", make_record(b"data/source-only", b"data/source-only"))],
    )
    assert contents(cm, merged) == contents(cm, expected)
    assert merged == expected  # history-independent: same records, same metarange ID


@pytest.mark.parametrize(
    ("source", "dest", "dest_wins", "source_wins"),
    [("B", "C", "C", "B"), ("B", "X", "X", "B"), ("X", "B", "B", "X")],
)
def test_strategies_resolve_every_conflict_row(
    cm: CommittedManager, source: str, dest: str, dest_wins: str, source_wins: str
):
    b, s, d = tree(cm, "A"), tree(cm, source), tree(cm, dest)
    for strategy, want in (("dest-wins", dest_wins), ("source-wins", source_wins)):
        merged, _ = cm.merge(b, s, d, strategy)
        assert merged == tree(cm, want), strategy


def test_strategy_leaves_non_conflicting_changes_alone(cm: CommittedManager):
    b = tree(cm, "A")
    s = tree(cm, "B", extra=b"data/new-on-source")
    d = tree(cm, "C", extra=b"data/new-on-dest")
    merged, _ = cm.merge(b, s, d, "dest-wins")
    got = contents(cm, merged)
    assert got[KEY] == make_record(KEY, "C").identity
    assert b"data/new-on-source" in got and b"data/new-on-dest" in got


def test_added_on_both_sides_differently_conflicts(cm: CommittedManager):
    b, s, d = tree(cm, "X"), tree(cm, "B"), tree(cm, "C")
    with pytest.raises(MergeConflict):
        cm.merge(b, s, d)


def test_conflict_error_lists_all_keys(cm: CommittedManager):
    base, _ = cm.write_records(make_record(k, "A") for k in FILLER)
    src, _ = cm.apply(base, [Change(k, make_record(k, "S")) for k in FILLER[:30]])
    dst, _ = cm.apply(base, [Change(k, make_record(k, "D")) for k in FILLER[10:40]])
    with pytest.raises(MergeConflict) as err:
        cm.merge(base, src, dst)
    assert err.value.keys == [k.decode() for k in FILLER[10:30]]
    assert "dest-wins" in str(err.value)


def test_unknown_strategy_is_a_clear_error(cm: CommittedManager):
    from graveler.core.errors import InvalidArgument

    b = tree(cm, "A")
    with pytest.raises(InvalidArgument, match="dest-wins"):
        cm.merge(b, tree(cm, "B"), tree(cm, "C"), "ours")
