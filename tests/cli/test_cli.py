"""The ``graveler`` CLI end to end (in-process ``main``), checking JSON documents, human output
and exit codes: 0 ok, 2 usage, 3 not found, 4 conflict, 1 other."""

from __future__ import annotations

import json
import subprocess
import sys

from graveler.cli import main


def test_full_tour_with_json(cli, tmp_path):
    ns = (tmp_path / "ns").as_uri()
    repo = cli("repo", "create", "graveler://lake", ns)
    assert repo["name"] == "lake" and repo["default_branch"] == "main"
    assert [r["name"] for r in cli("repo", "list")] == ["lake"]
    cli("branch", "create", "graveler://lake/dev", "--source", "graveler://lake/main")
    src = tmp_path / "data"
    (src / "sub").mkdir(parents=True)
    (src / "a.csv").write_text("x\n1\n")
    (src / "sub" / "b.txt").write_text("hello")
    up = cli("fs", "upload", str(src), "graveler://lake/dev/in/", "--recursive")
    assert sorted(d["path"] for d in up) == ["in/a.csv", "in/sub/b.txt"]
    assert cli("diff", "graveler://lake/dev") == [
        {"type": "added", "path": "in/a.csv"},
        {"type": "added", "path": "in/sub/b.txt"},
    ]
    c = cli("commit", "graveler://lake/dev", "-m", "load", "--meta", "run=7")
    assert set(c) == {
        "id",
        "parents",
        "message",
        "committer",
        "creation_date",
        "metadata",
        "metarange_id",
    }
    assert c["metadata"] == {"run": "7"} and c["message"] == "load"
    stat = cli("fs", "stat", "graveler://lake/dev/in/a.csv")
    assert set(stat) == {
        "path",
        "physical_address",
        "size",
        "checksum",
        "mtime",
        "content_type",
        "metadata",
    }
    assert stat["size"] == 4 and stat["physical_address"].startswith(ns + "/data/")
    ls = cli("fs", "ls", "graveler://lake/dev/in/")
    assert [(x["type"], x["path"]) for x in ls] == [
        ("object", "in/a.csv"),
        ("common_prefix", "in/sub/"),
    ]
    assert len(cli("fs", "ls", "graveler://lake/dev/", "--recursive")) == 2
    assert cli("diff", "graveler://lake/main", "graveler://lake/dev") == [
        {"type": "added", "path": "in/a.csv"},
        {"type": "added", "path": "in/sub/b.txt"},
    ]
    merged = cli("merge", "graveler://lake/dev", "graveler://lake/main")
    assert merged["id"] == c["id"]  # fast-forward
    assert [x["message"] for x in cli("log", "graveler://lake/main")] == [
        "load",
        "Repository created",
    ]
    assert len(cli("log", "graveler://lake/main", "--amount", "1")) == 1
    assert cli("show", "graveler://lake/main~1")["message"] == "Repository created"
    cli("tag", "create", "graveler://lake/v1", "graveler://lake/main")
    assert cli("tag", "list", "graveler://lake") == [{"name": "v1", "commit_id": c["id"]}]
    cli("fs", "rm", "graveler://lake/main/in/", "--recursive")
    cli("commit", "graveler://lake/main", "-m", "clean up")
    rev = cli("revert", "graveler://lake/main", "graveler://lake/main")
    assert rev["message"].startswith("Revert")
    assert len(cli("fs", "ls", "graveler://lake/v1/", "--recursive")) == 2
    cli("tag", "delete", "graveler://lake/v1")
    cli("branch", "delete", "graveler://lake/dev")
    assert [b["name"] for b in cli("branch", "list", "graveler://lake")] == ["main"]


def test_cat_writes_raw_bytes(cli, tmp_path, capsysbinary):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    f = tmp_path / "blob.bin"
    f.write_bytes(bytes(range(256)) * 10)
    cli("fs", "upload", str(f), "graveler://lake/main/blob.bin")
    rc = main(["--home", str(cli.home), "fs", "cat", "graveler://lake/main/blob.bin"])
    assert rc == 0 and capsysbinary.readouterr().out == bytes(range(256)) * 10


def test_reset_and_protect(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    f = tmp_path / "f"
    f.write_text("x")
    cli("fs", "upload", str(f), "graveler://lake/main/a/f")
    cli("fs", "upload", str(f), "graveler://lake/main/b/f")
    cli("branch", "reset", "graveler://lake/main", "--prefix", "a/")
    assert cli("diff", "graveler://lake/main") == [{"type": "added", "path": "b/f"}]
    cli("branch", "reset", "graveler://lake/main")
    assert cli("diff", "graveler://lake/main") == []
    cli("branch", "protect", "graveler://lake/main")
    err = cli("fs", "upload", str(f), "graveler://lake/main/c", code=4)
    assert "protected" in err


def test_exit_codes_and_one_line_errors(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    assert "not a branch, tag or commit" in cli("log", "graveler://lake/nope", code=3)
    assert "repository 'other' not found" in cli("show", "graveler://other/main", code=3)
    cli("repo", "create", "graveler://lake", (tmp_path / "ns2").as_uri(), code=4)
    cli("repo", "create", "graveler://A!", (tmp_path / "ns3").as_uri(), code=2)
    cli("commit", "graveler://lake/main", "-m", "empty", code=4)
    cli("log", "s3://not-graveler", code=2)
    cli("commit", "graveler://lake/main", "-m", "x", "--meta", "novalue", code=2)
    cli("branch", "delete", "graveler://lake/main", code=2)
    cli("fs", "stat", "lakefs://lake/main/missing", code=3)  # lakefs:// is accepted


def test_merge_conflict_exit_code(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    f = tmp_path / "f"
    f.write_text("base")
    cli("fs", "upload", str(f), "graveler://lake/main/k")
    cli("commit", "graveler://lake/main", "-m", "base")
    cli("branch", "create", "graveler://lake/dev", "--source", "graveler://lake/main")
    for branch, text in (("dev", "dev"), ("main", "main")):
        f.write_text(text)
        cli("fs", "upload", str(f), f"graveler://lake/{branch}/k")
        cli("commit", f"graveler://lake/{branch}", "-m", text)
    err = cli("merge", "graveler://lake/dev", "graveler://lake/main", code=4)
    assert "conflict" in err and "k" in err
    ok = cli("merge", "graveler://lake/dev", "graveler://lake/main", "--strategy", "source-wins")
    assert len(ok["parents"]) == 2


def test_usage_errors_exit_2_via_entry_point(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "graveler.cli", "--home", str(tmp_path), "frobnicate"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "graveler: error" in proc.stderr


def test_human_output_renders(tmp_path, capsys):
    home = str(tmp_path / "h")
    assert (
        main(["--home", home, "repo", "create", "graveler://lake", (tmp_path / "ns").as_uri()]) == 0
    )
    assert main(["--home", home, "repo", "list"]) == 0
    assert main(["--home", home, "log", "graveler://lake/main"]) == 0
    out = capsys.readouterr().out
    assert "Repository lake created" in out and "Repository created" in out


def test_python_dash_m_graveler_runs_the_cli(tmp_path):
    home = str(tmp_path / "home")
    run = [sys.executable, "-m", "graveler", "--home", home, "--json"]
    proc = subprocess.run([*run, "repo", "list"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and json.loads(proc.stdout) == []
    proc = subprocess.run([*run, "frobnicate"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "graveler: error" in proc.stderr


def test_repo_create_defaults_the_namespace_like_the_python_api(cli, tmp_path):
    from graveler.client import Graveler

    created = cli("repo", "create", "graveler://lake")
    with Graveler(home=cli.home) as gv:
        assert created["storage_namespace"] == gv.default_namespace("lake")
        assert gv.repository("lake").info.storage_namespace == gv.default_namespace("lake")
    assert created["storage_namespace"] == (cli.home / "data" / "lake").resolve().as_uri()


def test_a_tag_on_uncommitted_changes_is_refused(cli, tmp_path):
    cli("repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    err = cli("tag", "create", "graveler://lake/t", "graveler://lake/main$", code=2)
    assert "uncommitted changes" in err and "tag names a commit" in err
    assert cli("tag", "list", "graveler://lake") == []
    cli("tag", "create", "graveler://lake/t", "graveler://lake/main@")
