"""Garbage collection as a Spark job selects exactly what the model and the single-process
collector select, and deletes it; also through ``graveler gc --spark``."""

from __future__ import annotations

import json

import pytest
from graveler_spark import collect_garbage_spark

from graveler.cli import main
from graveler.maintenance.fsck import fsck
from graveler.maintenance.gc import collect_garbage
from graveler.maintenance.gc.ledger import EXPIRED_PREFIX
from tests.gc.model import model_garbage, staged_addresses
from tests.gc.scenario import random_scenario
from tests.spark.conftest import Lake


@pytest.mark.parametrize("seed", [0, 3])
def test_spark_and_single_process_select_the_model_set(spark, lake: Lake, seed: int) -> None:
    repo = lake.repo
    sc = random_scenario(repo, seed)
    expected = model_garbage(repo, sc.rules, sc.now, sc.grace)
    assert expected, "the scenario should produce garbage"
    staged = staged_addresses(repo)
    before = {i.key for i in repo.store.list("")}
    local = collect_garbage(repo, sc.rules, grace=sc.grace, now=sc.now, dry_run=True)
    dry = collect_garbage_spark(spark, repo, sc.rules, grace=sc.grace, now=sc.now, dry_run=True)
    assert {o.key for o in dry.selected} == {o.key for o in local.selected} == expected
    assert dry.selected == local.selected  # same sizes and mtimes too
    assert (dry.objects_marked, dry.tree_files_marked, dry.ranges_read) == (
        local.objects_marked,
        local.tree_files_marked,
        local.ranges_read,
    )
    assert {i.key for i in repo.store.list("")} == before
    done = collect_garbage_spark(spark, repo, sc.rules, grace=sc.grace, now=sc.now)
    assert done.deleted == len(expected)
    after = {i.key for i in repo.store.list("")}
    ledger = {k for k in after if k.startswith(EXPIRED_PREFIX)}  # what fsck reads
    assert after - ledger == before - expected
    assert not expected & staged and not expected & sc.young
    assert fsck(repo).clean  # the expired commits' objects are expired, not missing


def test_cli_gc_with_and_without_spark(spark, lake: Lake, capsys) -> None:
    repo = lake.repo
    repo.put("main", "a", b"1")
    repo.commit("main", "one")
    repo.put("main", "a", b"2")
    repo.commit("main", "two")
    base = ["--home", str(lake.gv.home), "--database-url", lake.gv.database_url, "--json", "gc"]
    args = [*base, "graveler://lake", "--retention-days", "0", "--grace-hours", "0", "--dry-run"]
    assert main(args) == 0
    single = json.loads(capsys.readouterr().out)
    assert main([*args, "--spark"]) == 0
    on_spark = json.loads(capsys.readouterr().out)
    assert single["selected"] == on_spark["selected"] and len(single["selected"]) == 1
    assert on_spark["dry_run"] is True and on_spark["deleted"] == 0
    assert main([*args[:-1], "--spark"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == 1
    assert repo.get("main", "a") == b"2"


def test_master_needs_spark(lake: Lake, capsys) -> None:
    base = ["--home", str(lake.gv.home), "--database-url", lake.gv.database_url, "gc"]
    assert main([*base, "graveler://lake", "--master", "local[1]"]) == 2
    assert "--master needs --spark" in capsys.readouterr().err
