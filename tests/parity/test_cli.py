"""The lakeFS-parity commands of the CLI, end to end with --json: log flags, cherry-pick,
revert, branch reset --hard, fs stat/ls --staged, actions runs, actions validate, import."""

from __future__ import annotations

from graveler.cli import main
from tests.cli.conftest import cli

__all__ = ["cli"]

ACTION = """name: owners
on:
  pre-commit:
    branches: [main]
hooks:
  - id: owner
    type: python
    properties:
      callable: tests.parity.hookfuncs:require_owner
"""


def _setup(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    f = tmp_path / "f.txt"
    for i in range(1, 4):
        f.write_text(f"v{i}")
        cli("fs", "upload", str(f), f"graveler://lake/main/foo/bar{i}")
        cli("commit", "graveler://lake/main", "-m", f"commit{i}")
    return f


def test_log_flags(cli, tmp_path):
    _setup(cli, tmp_path)
    msgs = lambda docs: [d["message"] for d in docs]  # noqa: E731
    assert msgs(cli("log", "graveler://lake/main")) == [
        "commit3",
        "commit2",
        "commit1",
        "Repository created",
    ]
    assert msgs(cli("log", "graveler://lake/main", "--amount", "1")) == ["commit3"]
    assert msgs(cli("log", "graveler://lake/main", "--objects", "foo/bar1,foo/bar3")) == [
        "commit3",
        "commit1",
    ]
    assert msgs(cli("log", "graveler://lake/main", "--prefixes", "foo/bar2")) == ["commit2"]
    assert msgs(cli("log", "graveler://lake/main", "--stop-at", "main~1")) == ["commit3", "commit2"]
    assert msgs(
        cli(
            "log",
            "graveler://lake/main",
            "--first-parent",
            "--no-merges",
            "--since",
            "2000-01-01T00:00:00Z",
            "--until",
            "2999-01-01T00:00:00+00:00",
        )
    ) == ["commit3", "commit2", "commit1", "Repository created"]
    assert "time zone" in cli("log", "graveler://lake/main", "--since", "2000-01-01", code=2)
    assert "empty path" in cli("log", "graveler://lake/main", "--objects", "a,,b", code=2)
    assert "'@' takes no number" in cli("log", "graveler://lake/main@1", code=2)
    assert msgs(cli("log", "graveler://lake/main@")) == msgs(cli("log", "graveler://lake/main"))


def test_cherry_pick_revert_and_hard_reset(cli, tmp_path):
    f = _setup(cli, tmp_path)
    head = cli("show", "graveler://lake/main")["id"]
    cli("branch", "create", "graveler://lake/dev", "--source", "graveler://lake/main~2")
    picked = cli(
        "cherry-pick",
        "graveler://lake/main",
        "graveler://lake/dev",
        "--message",
        "picked",
        "--meta",
        "k=v",
    )
    assert picked["message"] == "picked"
    assert picked["metadata"] == {
        "k": "v",
        "cherry-pick-origin": head,
        "cherry-pick-committer": picked["metadata"]["cherry-pick-committer"],
    }
    ls = cli("fs", "ls", "graveler://lake/dev/foo/")
    assert [x["path"] for x in ls] == ["foo/bar1", "foo/bar3"]
    reverted = cli("revert", "graveler://lake/main", "main", "main~1")
    assert [c["message"][:6] for c in reverted] == ["Revert", "Revert"]
    assert "changes nothing" in cli(
        "branch", "revert", "graveler://lake/main", "graveler://lake/main~3", code=4
    )  # the initial commit
    empty = cli(
        "branch",
        "revert",
        "graveler://lake/main",
        "main~4",
        "--allow-empty",
        "--message",
        "nothing",
    )
    assert empty["message"] == "nothing"
    f.write_text("staged")
    cli("fs", "upload", str(f), "graveler://lake/main/staged.txt")
    back = cli("branch", "reset", "graveler://lake/main", "--hard", "graveler://lake/main~3")
    assert back["id"] == head and cli("diff", "graveler://lake/main") == []
    assert "names uncommitted changes" in cli(
        "branch", "reset", "graveler://lake/main", "--hard", "main$", code=2
    )


def test_staged_reads(cli, tmp_path):
    f = _setup(cli, tmp_path)
    f.write_text("new")
    cli("fs", "upload", str(f), "graveler://lake/main/foo/bar1")
    cli("fs", "upload", str(f), "graveler://lake/main/new/x")
    assert cli("fs", "stat", "graveler://lake/main/foo/bar1", "--staged")["size"] == 3
    assert "nothing staged" in cli(
        "fs", "stat", "graveler://lake/main/foo/bar2", "--staged", code=3
    )
    assert [x["path"] for x in cli("fs", "ls", "graveler://lake/main/", "--staged")] == [
        "foo/",
        "new/",
    ]
    assert [x["path"] for x in cli("fs", "ls", "graveler://lake/main/", "--staged", "-r")] == [
        "foo/bar1",
        "new/x",
    ]


def test_actions_and_hook_runs(cli, tmp_path, monkeypatch, capsysbinary):
    _setup(cli, tmp_path)
    action = tmp_path / "owners.yaml"
    action.write_text(ACTION)
    assert cli("actions", "validate", str(action))["hooks"] == [{"id": "owner", "type": "python"}]
    (tmp_path / "bad.yaml").write_text("name: bad one\non:\n  not-an-event:\n")
    assert "not supported" in cli("actions", "validate", str(tmp_path / "bad.yaml"), code=2)
    cli("fs", "upload", str(action), "graveler://lake/main/_graveler_actions/owners.yaml")
    assert "not allowed" in cli("commit", "graveler://lake/main", "-m", "no modules", code=4)
    monkeypatch.setenv("GRAVELER_HOOK_MODULES", "tests.parity")
    assert "needs metadata 'owner'" in cli("commit", "graveler://lake/main", "-m", "x", code=4)
    ok = cli("commit", "graveler://lake/main", "-m", "x", "--meta", "owner=me")
    runs = cli("actions", "runs", "list", "graveler://lake")
    assert [(r["event_type"], r["status"]) for r in runs] == [
        ("pre-commit", "passed"),
        ("pre-commit", "failed"),
        ("pre-commit", "failed"),
    ]
    assert runs[0]["commit_id"] == ok["id"] and runs[0]["branch"] == "main"
    only = cli("actions", "runs", "list", "graveler://lake", "--commit", ok["id"])
    assert [r["run_id"] for r in only] == [runs[0]["run_id"]]
    described = cli("actions", "runs", "describe", "graveler://lake", runs[1]["run_id"])
    (hook,) = described["hooks"]
    assert (hook["hook_id"], hook["type"], hook["action"], hook["status"]) == (
        "owner",
        "python",
        "owners",
        "failed",
    )
    assert "metadata 'owner'" in hook["error"] and hook["output"] is None
    passed = cli("actions", "runs", "describe", "graveler://lake", runs[0]["run_id"])
    assert passed["hooks"][0]["output"] == "[bold]owner[/bold] is me"
    assert "not found" in cli("actions", "runs", "describe", "graveler://lake", "nope", code=3)
    # Without --json, the hook's output follows the table, as it is (not read as markup).
    home = ["--home", str(cli.home)]
    assert main([*home, "actions", "runs", "describe", "graveler://lake", runs[0]["run_id"]]) == 0
    shown = capsysbinary.readouterr().out.decode()
    assert "output of owner:\n[bold]owner[/bold] is me\n" in shown


def test_import(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    src = tmp_path / "bucket" / "raw"
    (src / "d").mkdir(parents=True)
    (src / "a.csv").write_text("a\n")
    (src / "d" / "b.csv").write_text("b\n")
    out = cli(
        "import",
        "--from",
        src.as_uri(),
        "--to",
        "graveler://lake/main/tables/raw",
        "-m",
        "import raw",
        "--meta",
        "by=cli",
    )
    assert out["objects"] == 2 and out["destination"] == "tables/raw/"
    assert out["commit"]["metadata"][".lakefs.merge.strategy"] == "source-wins"
    stat = cli("fs", "stat", "graveler://lake/main/tables/raw/d/b.csv")
    assert stat["physical_address"] == (src / "d" / "b.csv").as_uri()
    assert "invalid import source" in cli(
        "import", "--from", (tmp_path / "ns").as_uri(), "--to", "graveler://lake/main/x", code=2
    )
    assert "needs a branch" in cli(
        "import", "--from", src.as_uri(), "--to", "graveler://lake", code=2
    )


def test_merge_with_a_resolver(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    cli("branch", "create", "graveler://lake/dev", "--source", "graveler://lake/main")
    f = tmp_path / "f"
    for branch in ("dev", "main"):
        f.write_text(branch)
        cli("fs", "upload", str(f), f"graveler://lake/{branch}/a.csv")
        cli("fs", "upload", str(f), f"graveler://lake/{branch}/b.txt")
        cli("commit", f"graveler://lake/{branch}", "-m", branch)
    assert "conflict" in cli("merge", "graveler://lake/dev", "graveler://lake/main", code=4)
    resolver = "tests.parity.hookfuncs:prefer_source_for_csv"
    assert "b.txt" in cli(
        "merge", "graveler://lake/dev", "graveler://lake/main", "--resolver", resolver, code=4
    )  # b.txt is left undecided
    merged = cli(
        "merge",
        "graveler://lake/dev",
        "graveler://lake/main",
        "--resolver",
        resolver,
        "--strategy",
        "dest-wins",
    )
    assert merged["metadata"][".lakefs.merge.strategy"] == "dest-wins"
    assert cli("fs", "stat", "graveler://lake/main/a.csv")["size"] == 3  # "dev"
    assert cli("fs", "stat", "graveler://lake/main/b.txt")["size"] == 4  # "main"
    assert "cannot be loaded" in cli(
        "merge",
        "graveler://lake/dev",
        "graveler://lake/main",
        "--resolver",
        "tests.parity.hookfuncs:nope",
        code=2,
    )


def test_import_of_several_sources(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    one, two = tmp_path / "one", tmp_path / "two"
    (one / "d").mkdir(parents=True)
    two.mkdir()
    (one / "d" / "a.csv").write_text("a\n")
    (two / "b=1.csv").write_text("b\n")  # '=' in a path: sources are option pairs
    out = cli(
        "import",
        "--to",
        "graveler://lake/main",
        "--prefix",
        one.as_uri(),
        "first/",
        "--object",
        (two / "b=1.csv").as_uri(),
        "second/b=1.csv",
    )
    assert out["objects"] == 2 and out["sources"] == [one.as_uri(), (two / "b=1.csv").as_uri()]
    assert cli("fs", "stat", "graveler://lake/main/second/b=1.csv")["size"] == 2
    assert cli("fs", "stat", "graveler://lake/main/first/d/a.csv")["size"] == 2
    assert "for --from" in cli(
        "import", "--to", "graveler://lake/main/x", "--prefix", one.as_uri(), "y/", code=2
    )
    assert "nothing to import" in cli("import", "--to", "graveler://lake/main", code=2)
