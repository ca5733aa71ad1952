"""``graveler branch prune``: delete kept run branches idle for longer than an age."""

from __future__ import annotations

import json

from graveler.cli import main


def _run(home, capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["--home", str(home), *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_branch_prune_lists_then_deletes_idle_run_branches(tmp_path, capsys):
    home = tmp_path / "home"
    assert (
        _run(home, capsys, "repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())[0] == 0
    )
    for name in ("airflow-etl-1", "airflow-etl-2", "feature"):
        _run(
            home,
            capsys,
            "branch",
            "create",
            f"graveler://lake/{name}",
            "--source",
            "graveler://lake/main",
        )

    rc, out, _ = _run(
        home,
        capsys,
        "--json",
        "branch",
        "prune",
        "graveler://lake",
        "--older-than",
        "1h",
        "--prefix",
        "airflow-",
    )
    assert rc == 0 and json.loads(out) == {"dry_run": False, "branches": []}

    args = ("branch", "prune", "graveler://lake", "--older-than", "0s", "--prefix", "airflow-")
    rc, out, _ = _run(home, capsys, *args, "--dry-run")
    assert rc == 0 and "Would delete 2 branches of lake" in out and "airflow-etl-1" in out
    rc, out, _ = _run(home, capsys, "--json", *args)
    doc = json.loads(out)
    assert rc == 0 and sorted(b["name"] for b in doc["branches"]) == [
        "airflow-etl-1",
        "airflow-etl-2",
    ]
    assert all(len(b["commit_id"]) == 64 and b["idle_since"] for b in doc["branches"])
    rc, out, _ = _run(home, capsys, "--json", "branch", "list", "graveler://lake")
    assert sorted(b["name"] for b in json.loads(out)) == ["feature", "main"]


def test_branch_prune_refuses_a_bad_age_or_prefix(tmp_path, capsys):
    home = tmp_path / "home"
    _run(home, capsys, "repo", "create", "graveler://lake", (tmp_path / "ns").as_uri())
    rc, _, err = _run(
        home, capsys, "branch", "prune", "graveler://lake", "--older-than", "soon", "--prefix", "a-"
    )
    assert rc != 0 and "invalid age 'soon'" in err and err.count("\n") == 1
    rc, _, err = _run(
        home, capsys, "branch", "prune", "graveler://lake", "--older-than", "1d", "--prefix", ""
    )
    assert rc != 0 and "prefix" in err
