"""Retention rules a repository keeps in the refs database (lakeFS's gc_rules), on SQLite
and PostgreSQL."""

from __future__ import annotations

import pytest

from graveler.core.errors import InvalidArgument, InvalidName
from graveler.gc import RetentionRules, keep_rules, kept_rules


def test_kept_rules_round_trip(gv, repo):
    assert kept_rules(repo) is None
    rules = RetentionRules(14, {"main": 30})
    keep_rules(repo, rules)
    assert kept_rules(gv.repository(repo.name)) == rules
    assert rules.to_dict() == {
        "default_retention_days": 14,
        "branches": [{"branch_id": "main", "retention_days": 30}],
    }
    with pytest.raises(InvalidArgument, match="whole days"):
        keep_rules(repo, RetentionRules(0.5))
    with pytest.raises(InvalidName):
        keep_rules(repo, RetentionRules(1, {"bad name": 1}))
    assert kept_rules(repo) == rules
    keep_rules(repo, None)
    assert kept_rules(repo) is None
