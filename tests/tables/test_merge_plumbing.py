"""The table layer of a three-way merge, with a toy format: which tables reach the format,
what strategies do to a table changed on both sides, and that everything else still merges
as files. The real formats (Delta Lake, Iceberg) have suites of their own."""

from __future__ import annotations

import json

import pytest

from graveler.core.errors import MergeConflict, TableConflict
from graveler.repository import Repository
from graveler.tables import registry
from graveler.tables.port import Side, TableChange, TableMergeContext

LOG = "_toy_log/"


class ToyFormat:
    """A table is a folder with ``_toy_log/N.json`` files, each ``{"rows": [...]}``. Merging
    replays the source's log files after the destination's; a file holding "conflict" in
    its rows on both sides is a conflict."""

    name = "toy"

    def __init__(self) -> None:
        self.merged: list[str] = []

    def table_root(self, path: str) -> str | None:
        at = path.find(LOG)
        if at < 0 or (at > 0 and path[at - 1] != "/"):
            return None
        return path[:at]

    def merge(self, ctx: TableMergeContext) -> list[TableChange]:
        self.merged.append(ctx.root)
        base = {e.path for e in ctx.list(Side.BASE, LOG)}
        dest = [e.path for e in ctx.list(Side.DEST, LOG)]
        source_new = [e.path for e in ctx.list(Side.SOURCE, LOG) if e.path not in base]
        rows = lambda side, p: json.loads(ctx.read(side, p))["rows"]  # noqa: E731
        dest_new = [p for p in dest if p not in base]
        if any("conflict" in rows(Side.SOURCE, p) for p in source_new) and any(
            "conflict" in rows(Side.DEST, p) for p in dest_new
        ):
            raise TableConflict(
                ctx.root,
                "toy",
                "ToyConflict",
                "both sides said so",
                source_version=len(source_new),
                dest_version=len(dest),
            )
        changes = [c for c in ctx.changes(Side.SOURCE) if LOG not in c.path]
        for i, path in enumerate(source_new, start=len(dest)):
            data = ctx.read(Side.SOURCE, path)
            changes.append(ctx.write(f"{ctx.root}{LOG}{i}.json", data))
        return changes


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> ToyFormat:
    fmt = ToyFormat()
    monkeypatch.setattr(registry, "formats", lambda: (fmt,))
    return fmt


def _append(repo: Repository, branch: str, table: str, rows: list[str], data: str) -> None:
    n = sum(1 for _ in repo.iter_objects(branch, prefix=f"{table}/{LOG}"))
    repo.put(branch, f"{table}/{LOG}{n}.json", json.dumps({"rows": rows}).encode())
    repo.put(branch, f"{table}/{data}", b"x")
    repo.commit(branch, f"append {rows}")


def _table_log(repo: Repository, ref: str, table: str) -> list[list[str]]:
    entries = sorted(
        repo.iter_objects(ref, prefix=f"{table}/{LOG}"),
        key=lambda e: int(e.path.rsplit("/", 1)[1].split(".")[0]),
    )
    return [json.loads(repo.get(ref, e.path))["rows"] for e in entries]


@pytest.fixture
def forked(repo: Repository) -> Repository:
    _append(repo, "main", "t", ["a"], "part-a")
    repo.put("main", "other/keep", b"1")
    repo.commit("main", "base")
    repo.create_branch("run", "main")
    return repo


def test_both_sides_changed_the_table_merges_as_a_table(forked: Repository, toy: ToyFormat):
    _append(forked, "run", "t", ["s"], "part-s")
    _append(forked, "main", "t", ["d"], "part-d")
    forked.put("run", "plain/file", b"y")
    forked.commit("run", "plain")
    forked.merge("run", "main")
    assert toy.merged == ["t/"]
    assert _table_log(forked, "main", "t") == [["a"], ["d"], ["s"]]
    for path in ("t/part-a", "t/part-s", "t/part-d", "plain/file", "other/keep"):
        assert forked.exists("main", path), path


def test_one_side_changed_the_table_merges_as_files(forked: Repository, toy: ToyFormat):
    _append(forked, "run", "t", ["s"], "part-s")
    forked.put("main", "other/new", b"2")
    forked.commit("main", "elsewhere")
    forked.merge("run", "main")
    assert toy.merged == []
    assert _table_log(forked, "main", "t") == [["a"], ["s"]]


def test_table_conflict_names_the_table_and_changes_nothing(forked: Repository, toy: ToyFormat):
    _append(forked, "run", "t", ["conflict"], "part-s")
    _append(forked, "main", "t", ["conflict"], "part-d")
    head = forked.branch("main").commit_id
    with pytest.raises(TableConflict) as caught:
        forked.merge("run", "main")
    assert isinstance(caught.value, MergeConflict)
    assert caught.value.table == "t/" and caught.value.kind == "ToyConflict"
    assert "toy table 't/'" in str(caught.value)
    assert forked.branch("main").commit_id == head


@pytest.mark.parametrize(("strategy", "winner"), [("source-wins", "s"), ("dest-wins", "d")])
def test_strategies_take_the_whole_table_from_one_side(
    forked: Repository, toy: ToyFormat, strategy: str, winner: str
):
    _append(forked, "run", "t", ["conflict"], "part-s")
    _append(forked, "main", "t", ["conflict"], "part-d")
    forked.put("run", "plain/file", b"y")
    forked.commit("run", "plain")
    forked.merge("run", "main", strategy=strategy)
    assert toy.merged == ["t/"]  # asked first: the strategy settles the conflict
    files = {e.path for e in forked.iter_objects("main", prefix="t/")}
    loser = "d" if winner == "s" else "s"
    assert f"t/part-{winner}" in files and f"t/part-{loser}" not in files
    assert forked.exists("main", "plain/file")


def test_without_a_format_both_sides_conflict_on_files(forked: Repository):
    _append(forked, "run", "t", ["s"], "part-s")
    _append(forked, "main", "t", ["d"], "part-d")
    with pytest.raises(MergeConflict) as caught:
        forked.merge("run", "main")
    assert not isinstance(caught.value, TableConflict)
    assert caught.value.keys == [f"t/{LOG}1.json"]


@pytest.mark.parametrize("strategy", ["source-wins", "dest-wins"])
def test_a_strategy_leaves_a_table_without_conflict_to_the_format(
    forked: Repository, toy: ToyFormat, strategy: str
):
    _append(forked, "run", "t", ["s"], "part-s")
    _append(forked, "main", "t", ["d"], "part-d")
    forked.merge("run", "main", strategy=strategy)
    assert toy.merged == ["t/"]
    assert _table_log(forked, "main", "t") == [["a"], ["d"], ["s"]]
