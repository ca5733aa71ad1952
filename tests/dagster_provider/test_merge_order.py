"""Regression: Dagster's latest materialization of an asset names the version ``main`` holds,
whatever order the runs that wrote it are merged in.

Two runs materialize one unpartitioned asset on their own branches (the second run's
materialization is the one Dagster stores last), then the merge sensor publishes them in a
chosen order. With ``source-wins`` the run merged last wins on main; with ``dest-wins`` the
run merged first does. A deployment meets this when two runs finish close together (the
diff-sensor runs of ``test_deployment.py``): the merge sensor publishes runs in the order
they succeeded, not the order Dagster stored their materializations in.

The other tests fix the interleavings of concurrent publications that the check after each
merge has to survive: a report stored after another merge landed, a run succeeded but not
yet published, and a merge landing before the other run's publication is over.
"""

from __future__ import annotations

import io
from typing import Any

import dagster as dg
import pandas as pd
import pytest
from graveler_dagster import GravelerResource, graveler_definitions
from graveler_dagster.definitions import DefinitionsPieces
from graveler_dagster.lineage import PUBLISHED_BY_KEY, RESTATES_KEY, latest, recorded

from tests.dagster_provider.conftest import evaluate_run_sensor

KEY = dg.AssetKey("ingested")
VERSION = {"value": 0}


@dg.asset
def ingested() -> pd.DataFrame:
    return pd.DataFrame({"version": [VERSION["value"]]})


def _materialize(pieces: DefinitionsPieces, instance: dg.DagsterInstance, version: int) -> Any:
    VERSION["value"] = version
    result = dg.materialize([ingested], instance=instance, resources=pieces["resources"])
    assert result.success
    return result


def _publish(pieces: DefinitionsPieces, instance: dg.DagsterInstance, result: Any) -> None:
    merge_sensor = pieces["sensors"][0]
    assert evaluate_run_sensor(merge_sensor, instance, result, pieces["resources"]) is None


def _named_version(instance: dg.DagsterInstance, repo: Any) -> int:
    """The version Dagster's latest materialization of ``ingested`` names."""
    rec = recorded(latest(instance, KEY, None), None)
    assert rec is not None
    return int(pd.read_parquet(io.BytesIO(repo.get(rec.commit, rec.path)))["version"][0])


def _main_version(repo: Any) -> int:
    return int(pd.read_parquet(io.BytesIO(repo.get("main", "ingested")))["version"][0])


@pytest.mark.parametrize(
    ("strategy", "later_merged_first", "on_main", "restated"),
    [
        ("source-wins", True, 1, True),  # the failure the deployment test saw
        ("source-wins", False, 2, False),
        ("dest-wins", False, 1, True),
        ("dest-wins", True, 2, False),
    ],
)
def test_latest_materialization_names_mains_version_whatever_the_merge_order(
    resource: GravelerResource,
    instance: dg.DagsterInstance,
    strategy: str,
    later_merged_first: bool,
    on_main: int,
    restated: bool,
) -> None:
    pieces = graveler_definitions(resource, merge_strategy=strategy)
    first, second = _materialize(pieces, instance, 1), _materialize(pieces, instance, 2)
    assert instance.get_latest_materialization_event(KEY).run_id == second.run_id  # type: ignore[union-attr]
    order = (second, first) if later_merged_first else (first, second)
    repo = resource.get_repository()
    try:
        for run in order:
            _publish(pieces, instance, run)
        assert _main_version(repo) == on_main  # the strategy decided, as documented
        assert _named_version(instance, repo) == on_main
        entry = latest(instance, KEY, None)
        assert entry is not None and (entry.run_id == "") == restated
        if restated:  # a run-less restatement of main's head, saying what it replaces
            meta = entry.asset_materialization.metadata
            assert meta["graveler/commit"].value == repo.resolve("main").commit.id
            assert meta[RESTATES_KEY].value == second.run_id  # the one main does not hold
            assert meta[PUBLISHED_BY_KEY].value == order[1].run_id
        else:  # the run Dagster names is the one main holds: nothing reported
            assert entry.run_id == (first if on_main == 1 else second).run_id
    finally:
        resource.close()


def test_a_report_stored_after_another_merge_landed_is_checked_again(
    resource: GravelerResource, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs ``a``, ``c``, ``b`` materialize in that order; ``b`` is merged, then ``a``, whose
    publication finds Dagster naming ``b``'s version and reports ``a``'s. Just before that
    report is stored, ``c`` is merged and its publication completes (it reports ``c``'s
    version over ``b``'s). ``a``'s report, stored last, then names a version main no longer
    holds: ``a``'s publication, seeing main move while it looked, has to check again."""
    pieces = graveler_definitions(resource)
    a, c, b = (_materialize(pieces, instance, v) for v in (1, 3, 2))
    repo = resource.get_repository()
    try:
        _publish(pieces, instance, b)
        report = instance.report_runless_asset_event
        interleaved: list[str] = []

        def merge_c_first(event: Any) -> None:
            if not interleaved:
                interleaved.append(c.run_id)
                monkeypatch.setattr(instance, "report_runless_asset_event", report)
                _publish(pieces, instance, c)
            report(event)

        monkeypatch.setattr(instance, "report_runless_asset_event", merge_c_first)
        _publish(pieces, instance, a)
        assert interleaved == [c.run_id]  # the interleaving happened as described
        assert _main_version(repo) == 3  # c's merge landed last (source-wins)
        assert _named_version(instance, repo) == 3
    finally:
        resource.close()


def test_a_run_waiting_for_its_publication_keeps_its_materialization(
    resource: GravelerResource, instance: dg.DagsterInstance
) -> None:
    """``b`` succeeded after ``a`` but is not published yet when ``a`` is: its
    materialization stays the latest (a downstream step would publish ``b`` and read it),
    and ``b``'s own publication then leaves nothing to restate."""
    pieces = graveler_definitions(resource)
    a, b = _materialize(pieces, instance, 1), _materialize(pieces, instance, 2)
    repo = resource.get_repository()
    try:
        _publish(pieces, instance, a)
        assert _main_version(repo) == 1
        assert instance.get_latest_materialization_event(KEY).run_id == b.run_id  # type: ignore[union-attr]
        _publish(pieces, instance, b)
        assert _main_version(repo) == _named_version(instance, repo) == 2
        assert instance.get_latest_materialization_event(KEY).run_id == b.run_id  # type: ignore[union-attr]
    finally:
        resource.close()


def test_a_merge_landing_before_the_other_run_is_tagged_is_settled_by_that_run(
    resource: GravelerResource, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``b``'s merge lands; before ``b`` is tagged merged, ``a`` is published completely and,
    finding ``b``'s materialization latest with ``b``'s publication not over, leaves it.
    ``b``'s publication checks after tagging, so it sees ``a``'s merge and restates."""
    pieces = graveler_definitions(resource)
    a, b = _materialize(pieces, instance, 1), _materialize(pieces, instance, 2)
    repo = resource.get_repository()
    tag = instance.add_run_tags
    interleaved: list[str] = []

    def publish_a_first(run_id: str, tags: dict[str, str]) -> None:
        if run_id == b.run_id and tags.get("graveler/merge") == "merged" and not interleaved:
            interleaved.append(a.run_id)
            _publish(pieces, instance, a)
        tag(run_id, tags)

    monkeypatch.setattr(instance, "add_run_tags", publish_a_first)
    try:
        _publish(pieces, instance, b)
        assert interleaved == [a.run_id]
        assert _main_version(repo) == 1  # a's merge landed last
        assert _named_version(instance, repo) == 1
    finally:
        resource.close()
