"""Retention rules: the engine's early-stopping walk against the whole-chain model, on random
commit graphs (hypothesis), plus the rules' parsing and validation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graveler.core.errors import InvalidArgument
from graveler.core.model import Branch, Commit, Tag
from graveler.maintenance.gc import RetentionRules, retained_commits
from tests.gc.model import model_retained

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@st.composite
def histories(draw: st.DrawFn) -> tuple[dict[str, Commit], list[Branch], list[Tag]]:
    """A random DAG: each commit has 0-2 earlier parents and a random creation day."""
    n = draw(st.integers(1, 30))
    commits: dict[str, Commit] = {}
    ids = [f"c{i:02d}" for i in range(n)]
    for i, cid in enumerate(ids):
        parents: list[str] = []
        if i and draw(st.integers(0, 5)) > 0:
            parents.append(ids[draw(st.integers(0, i - 1))])
            if i > 1 and draw(st.integers(0, 4)) == 0:
                parents.append(ids[draw(st.integers(0, i - 1))])
        day = draw(st.integers(0, 40))
        commits[cid] = Commit(cid, tuple(parents), "", "", "x", T0 + timedelta(days=day))
    heads = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=4))
    branches = [Branch(f"b{i}", h, "tok") for i, h in enumerate(heads)]
    tags = [Tag(f"t{i}", c) for i, c in enumerate(draw(st.lists(st.sampled_from(ids), max_size=3)))]
    return commits, branches, tags


@settings(max_examples=150, deadline=None)
@given(
    histories(),
    st.floats(0, 45),
    st.dictionaries(st.sampled_from(["b0", "b1", "b2"]), st.floats(0, 45), max_size=3),
)
def test_engine_matches_model(history, default_days, branch_days) -> None:
    commits, branches, tags = history
    rules = RetentionRules(default_days, branch_days)
    now = T0 + timedelta(days=41)
    assert retained_commits(commits, branches, tags, rules, now) == model_retained(
        commits, branches, tags, rules, now
    )


def test_head_window_keeps_the_commit_that_was_head_at_the_cutoff() -> None:
    a = Commit("a", (), "", "", "x", T0)
    b = Commit("b", ("a",), "", "", "x", T0 + timedelta(days=10))
    c = Commit("c", ("b",), "", "", "x", T0 + timedelta(days=20))
    commits = {x.id: x for x in (a, b, c)}
    rules = RetentionRules(default_days=5)
    now = T0 + timedelta(days=22)
    # c is the head; b was the head until day 20, inside the 5-day window; a never was.
    assert retained_commits(commits, [Branch("main", "c", "t")], [], rules, now) == {"b", "c"}
    # a deleted branch's commit survives the default window only
    dangling = Commit("d", ("a",), "", "", "x", T0 + timedelta(days=19))
    commits["d"] = dangling
    assert "d" in retained_commits(commits, [Branch("main", "c", "t")], [], rules, now)
    later = now + timedelta(days=4)
    assert "d" not in retained_commits(commits, [Branch("main", "c", "t")], [], rules, later)


def test_rules_parse_the_lakefs_shape_and_refuse_nonsense(tmp_path) -> None:
    doc = {"default_retention_days": 14, "branches": [{"branch_id": "main", "retention_days": 30}]}
    rules = RetentionRules.from_dict(doc)
    assert rules.days_for("main") == 30 and rules.days_for("dev") == 14
    assert RetentionRules.from_dict(rules.to_dict()) == rules
    path = tmp_path / "rules.json"
    path.write_text('{"default_retention_days": 3}')
    assert RetentionRules.load(path).default_days == 3
    for bad in ({"branches": [{"branch_id": "x"}]}, {"default_retention_days": "soon"}):
        with pytest.raises(InvalidArgument):
            RetentionRules.from_dict(bad)
    for days in (-1, float("nan"), float("inf")):
        with pytest.raises(InvalidArgument):
            RetentionRules(default_days=days)
    path.write_text("[1, 2]")
    with pytest.raises(InvalidArgument):
        RetentionRules.load(path)
