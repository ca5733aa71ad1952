"""The Delta merge beyond the oracle matrix: what a replay rewrites, what it leaves out,
and what it refuses. Tables are written by delta-rs (or edited by hand where a writer
feature is needed that delta-rs lacks) and read back by delta-rs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from graveler.core.errors import TableConflict
from graveler.repository import Repository
from tests.tables.delta import ops
from tests.tables.delta.workdir import checkout, publish

ROOT = "t/"
LOG = ROOT + "_delta_log/"


def _version_path(version: int) -> str:
    return f"{LOG}{version:020d}.json"


@pytest.fixture
def lake(repo: Repository, tmp_path: Path) -> Repository:
    """main holds the base table (versions 0 and 1); branches s (source) and d (dest)."""
    table = tmp_path / "base"
    for step in ops.BASE:
        ops.run(table, step)
    publish(repo, "main", ROOT, table, "base")
    repo.create_branch("s", "main")
    repo.create_branch("d", "main")
    return repo


def _on(repo: Repository, branch: str, tmp_path: Path, *specs: ops.Spec) -> Path:
    """Run ``specs`` with delta-rs on the branch's table and commit the result."""
    work = checkout(repo, branch, ROOT, tmp_path / f"{branch}-{len(list(tmp_path.iterdir()))}")
    for spec in specs:
        ops.run(work, spec)
    publish(repo, branch, ROOT, work, f"{[s['op'] for s in specs]}")
    return work


def _merge_both(repo: Repository) -> None:
    repo.merge("d", "main")
    repo.merge("s", "main")


def _main_rows(repo: Repository, tmp_path: Path) -> list[list[Any]]:
    return ops.rows(checkout(repo, "main", ROOT, tmp_path / "main-view"))


def _commit(repo: Repository, ref: str, version: int) -> list[dict[str, Any]]:
    return [json.loads(line) for line in repo.get(ref, _version_path(version)).splitlines()]


def _edit(repo: Repository, branch: str, version: int, change: Any) -> None:
    """Rewrite the branch's commit ``version`` with ``change(actions)`` (a writer that
    records what delta-rs does not), and commit."""
    actions = _commit(repo, branch, version)
    change(actions)
    text = "".join(json.dumps(a) + "\n" for a in actions)
    repo.put(branch, _version_path(version), text.encode())
    repo.commit(branch, f"edit version {version}")


def test_several_commits_on_each_side_replay_in_order(lake: Repository, tmp_path: Path):
    _on(lake, "d", tmp_path, ops.append((10, "a")), ops.append((11, "a")))
    _on(lake, "s", tmp_path, ops.append((20, "b")), ops.delete("part = 'b' AND id = 2"))
    _merge_both(lake)
    assert _main_rows(lake, tmp_path) == [[1, "a"], [10, "a"], [11, "a"], [20, "b"], [3, "a"]]
    names = sorted(e.path for e in lake.iter_objects("main", prefix=LOG))
    assert names == [_version_path(v) for v in range(6)]
    # the delete read the source's own append (its version 2): now version 4
    info = _commit(lake, "main", 5)[0]["commitInfo"]
    assert info["operation"] == "DELETE" and info["readVersion"] == 4
    assert DeltaTable(str(checkout(lake, "main", ROOT, tmp_path / "v"))).version() == 5


def test_a_conflict_names_the_table_the_kind_and_both_versions(lake: Repository, tmp_path: Path):
    _on(lake, "d", tmp_path, ops.append((10, "a")))
    _on(lake, "s", tmp_path, ops.delete("part = 'a'"))
    lake.merge("d", "main")
    head = lake.branch("main").commit_id
    with pytest.raises(TableConflict) as caught:
        lake.merge("s", "main")
    e = caught.value
    assert (e.table, e.format, e.kind) == ("t/", "delta", "ConcurrentAppend")
    assert (e.source_version, e.dest_version) == (2, 2)
    assert "delta table 't/'" in str(e) and "partition [part=a]" in str(e)
    assert lake.branch("main").commit_id == head


@pytest.mark.parametrize(("strategy", "winner"), [("source-wins", "s"), ("dest-wins", "d")])
def test_strategies_take_one_side_s_whole_table(
    lake: Repository, tmp_path: Path, strategy: str, winner: str
):
    dest = _on(lake, "d", tmp_path, ops.append((10, "a")))
    source = _on(lake, "s", tmp_path, ops.delete("part = 'a'"))
    lake.merge("d", "main")
    lake.merge("s", "main", strategy=strategy)
    expected = ops.rows(source if winner == "s" else dest)
    assert _main_rows(lake, tmp_path) == expected
    side = {e.path: e.checksum for e in lake.iter_objects(winner, prefix=ROOT)}
    assert {e.path: e.checksum for e in lake.iter_objects("main", prefix=ROOT)} == side


def test_a_table_one_side_changed_merges_as_files(lake: Repository, tmp_path: Path):
    lake.put("d", "elsewhere/file", b"x")
    lake.commit("d", "not the table")
    work = _on(lake, "s", tmp_path, ops.append((10, "a")))
    DeltaTable(str(work)).create_checkpoint()
    publish(lake, "s", ROOT, work, "checkpoint")
    _merge_both(lake)
    source = {e.path: e.checksum for e in lake.iter_objects("s", prefix=ROOT)}
    assert {e.path: e.checksum for e in lake.iter_objects("main", prefix=ROOT)} == source


def test_source_checkpoints_and_checksums_are_not_replayed(lake: Repository, tmp_path: Path):
    dest = _on(lake, "d", tmp_path, ops.append((10, "a")))
    DeltaTable(str(dest)).create_checkpoint()  # the destination's checkpoint at 2 stays
    publish(lake, "d", ROOT, dest, "checkpoint")
    source = _on(lake, "s", tmp_path, ops.append((20, "b")), ops.append((21, "b")))
    DeltaTable(str(source)).create_checkpoint()  # at 3: the source's numbering
    (source / "_delta_log" / f"{3:020d}.crc").write_text('{"numFiles": 99}')
    publish(lake, "s", ROOT, source, "checkpoint and checksum")
    _merge_both(lake)
    names = {e.path[len(LOG) :] for e in lake.iter_objects("main", prefix=LOG)}
    assert f"{2:020d}.checkpoint.parquet" in names
    assert not [n for n in names if n.startswith(f"{3:020d}.") and not n.endswith(".json")]
    assert json.loads(lake.get("main", LOG + "_last_checkpoint"))["version"] == 2
    view = checkout(lake, "main", ROOT, tmp_path / "merged")
    assert DeltaTable(str(view)).version() == 4
    assert ops.rows(view) == [[1, "a"], [10, "a"], [2, "b"], [20, "b"], [21, "b"], [3, "a"]]


def test_partition_columns_come_from_the_base_s_checkpoint(repo: Repository, tmp_path: Path):
    table = tmp_path / "base"
    for step in ops.BASE:
        ops.run(table, step)
    DeltaTable(str(table)).create_checkpoint()
    ops.run(table, ops.append((4, "b")))
    publish(repo, "main", ROOT, table, "base with a checkpoint")
    repo.delete("main", f"{LOG}{0:020d}.json")  # cleaned up: the checkpoint holds it all
    repo.commit("main", "log clean-up")
    repo.create_branch("s", "main")
    repo.create_branch("d", "main")
    _on(repo, "d", tmp_path, ops.append((10, "a")))
    _on(repo, "s", tmp_path, ops.delete("part = 'b'"))
    _merge_both(repo)  # partitioned: the delete of b read nothing the append added
    assert _main_rows(repo, tmp_path) == [[1, "a"], [10, "a"], [3, "a"]]


def test_write_serializable_lets_a_delete_pass_a_blind_append(repo: Repository, tmp_path: Path):
    table = tmp_path / "base"
    ops.run(table, {**ops.BASE[0], "properties": {"delta.isolationLevel": "WriteSerializable"}})
    publish(repo, "main", ROOT, table, "base")
    repo.create_branch("s", "main")
    repo.create_branch("d", "main")
    _on(repo, "d", tmp_path, ops.append((10, "a")))
    # delta-spark records a blind append as such; delta-rs does not (docs/delta.md)
    _edit(repo, "d", 1, lambda acts: acts[0]["commitInfo"].update(isBlindAppend=True))
    _on(repo, "s", tmp_path, ops.delete("part = 'a'"))
    _merge_both(repo)
    assert _main_rows(repo, tmp_path) == [[10, "a"], [2, "b"]]


def test_serializable_refuses_the_same_delete(lake: Repository, tmp_path: Path):
    _on(lake, "d", tmp_path, ops.append((10, "a")))
    _edit(lake, "d", 2, lambda acts: acts[0]["commitInfo"].update(isBlindAppend=True))
    _on(lake, "s", tmp_path, ops.delete("part = 'a'"))
    lake.merge("d", "main")
    with pytest.raises(TableConflict, match="ConcurrentAppend"):
        lake.merge("s", "main")


def test_in_commit_timestamps_stay_increasing(lake: Repository, tmp_path: Path):
    _on(lake, "s", tmp_path, ops.append((20, "b")))
    _on(lake, "d", tmp_path, ops.append((10, "a")))
    later = _commit(lake, "s", 2)[0]["commitInfo"]["timestamp"] + 60_000
    for branch, stamp in (("s", later - 120_000), ("d", later)):
        _edit(
            lake, branch, 2, lambda acts, s=stamp: acts[0]["commitInfo"].update(inCommitTimestamp=s)
        )
    _merge_both(lake)
    stamps = [_commit(lake, "main", v)[0]["commitInfo"].get("inCommitTimestamp") for v in (2, 3)]
    assert stamps == [later, later + 1]


def test_a_writer_feature_the_merge_cannot_replay_is_refused(lake: Repository, tmp_path: Path):
    def row_tracking(actions: list[dict[str, Any]]) -> None:
        actions.insert(
            1,
            {
                "protocol": {
                    "minReaderVersion": 1,
                    "minWriterVersion": 7,
                    "writerFeatures": ["rowTracking"],
                }
            },
        )

    _on(lake, "d", tmp_path, ops.append((10, "a")))
    _on(lake, "s", tmp_path, ops.append((20, "b")))
    _edit(lake, "s", 2, row_tracking)
    lake.merge("d", "main")
    with pytest.raises(TableConflict) as caught:
        lake.merge("s", "main")
    assert caught.value.kind == "UnsupportedTableFeature" and "rowTracking" in str(caught.value)


def test_a_rewritten_commit_is_refused(lake: Repository, tmp_path: Path):
    _on(lake, "d", tmp_path, ops.append((10, "a")))
    _on(lake, "s", tmp_path, ops.append((20, "b")))
    _edit(lake, "d", 1, lambda acts: acts[0]["commitInfo"].update(note="rewritten"))
    lake.merge("d", "main")
    with pytest.raises(TableConflict) as caught:
        lake.merge("s", "main")
    assert caught.value.kind == "LogRewritten"


def test_one_data_path_written_differently_on_both_sides_is_refused(
    lake: Repository, tmp_path: Path
):
    _on(lake, "d", tmp_path, ops.append((10, "a")))
    _on(lake, "s", tmp_path, ops.append((20, "b")))
    for branch in ("d", "s"):
        lake.put(branch, ROOT + "part=a/shared.parquet", branch.encode())
        lake.commit(branch, "same name")
    lake.merge("d", "main")
    with pytest.raises(TableConflict) as caught:
        lake.merge("s", "main")
    assert caught.value.kind == "ConcurrentWrite"


@pytest.mark.parametrize("strategy", ["source-wins", "dest-wins"])
def test_a_strategy_keeps_both_sides_appends(lake: Repository, tmp_path: Path, strategy: str):
    """A strategy settles conflicts only (Dagster's runs publish with source-wins)."""
    _on(lake, "d", tmp_path, ops.append((10, "a")))
    _on(lake, "s", tmp_path, ops.append((20, "a")))
    lake.merge("d", "main")
    lake.merge("s", "main", strategy=strategy)
    assert _main_rows(lake, tmp_path) == [[1, "a"], [10, "a"], [2, "b"], [20, "a"], [3, "a"]]


def test_a_table_strategy_apart_from_the_files_strategy(lake: Repository, tmp_path: Path):
    """Dagster's runs settle files with source-wins and leave tables to Delta's rules."""
    _on(lake, "d", tmp_path, ops.append((10, "a")))
    _on(lake, "s", tmp_path, ops.delete("part = 'a'"))
    lake.put("s", "notes/x", b"run")
    lake.commit("s", "a file too")
    lake.merge("d", "main")
    with pytest.raises(TableConflict, match="ConcurrentAppend"):
        lake.merge("s", "main", strategy="source-wins", table_strategy=None)
    merged = lake.merge("s", "main", strategy="source-wins", table_strategy="dest-wins")
    assert merged.commit.metadata[".graveler.merge.table_strategy"] == "dest-wins"
    assert _main_rows(lake, tmp_path) == [[1, "a"], [10, "a"], [2, "b"], [3, "a"]]
    assert lake.get("main", "notes/x") == b"run"


def test_a_table_created_on_both_sides_conflicts_as_concurrent_creates(
    repo: Repository, tmp_path: Path
):
    """Delta fails the second of two writers creating one table: ProtocolChanged."""
    repo.put("main", "readme", b"no table yet")
    repo.commit("main", "base")
    for branch, rows in (("d", [(1, "a")]), ("s", [(2, "b")])):
        repo.create_branch(branch, "main")
        table = tmp_path / branch
        ops.run(table, {"op": "create", "rows": [list(r) for r in rows]})
        publish(repo, branch, ROOT, table, "create")
    repo.merge("d", "main")
    with pytest.raises(TableConflict) as caught:
        repo.merge("s", "main")
    assert caught.value.kind == "ProtocolChanged"
