"""``graveler gc`` on the command line: dry run, progress, rules, exit codes."""

from __future__ import annotations

import json

from graveler.cli import main
from graveler.client import Graveler


def _history(home) -> Graveler:
    gv = Graveler(home=home)
    repo = gv.create_repository("lake")
    repo.put("main", "a", b"1")
    repo.commit("main", "one")
    repo.put("main", "a", b"2")
    repo.commit("main", "two")
    repo.create_branch("dev", "main")
    repo.put("dev", "b", b"3")
    repo.commit("dev", "dev")
    return gv


def test_dry_run_prints_what_would_go_then_deletes(tmp_path, capsys) -> None:
    gv = _history(tmp_path / "home")
    old = gv.repository("lake").stat("main~1", "a").physical_address
    base = ["--home", str(tmp_path / "home"), "gc", "graveler://lake", "--grace-hours", "0"]
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"default_retention_days": 0, "branches": []}))
    assert main([*base, "--rules", str(rules), "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert f"would delete  {old}" in out and "Would delete 1 object(s)" in out
    assert "Reading ranges:" in err and "Listing the namespace:" in err
    assert gv.repository("lake").store.exists(old)
    assert main([*base, "--retention-days", "0", "--branch-retention", "main=1000"]) == 0
    assert "Deleted 0 object(s)" in capsys.readouterr().out  # main keeps its history
    assert main([*base, "--retention-days", "0"]) == 0
    out, err = capsys.readouterr()
    assert f"deleted  {old}" in out and "Deleting: 1" in err
    assert not gv.repository("lake").store.exists(old)
    assert gv.repository("lake").get("dev", "b") == b"3"
    gv.close()


def test_bad_arguments_exit_2_and_change_nothing(tmp_path, capsys) -> None:
    gv = _history(tmp_path / "home")
    base = ["--home", str(tmp_path / "home"), "gc", "graveler://lake"]
    for extra in (
        ["--branch-retention", "main"],
        ["--branch-retention", "main=soon"],
        ["--retention-days", "-1"],
        ["--grace-hours", "-2"],
        ["--rules", "/nope.json"],
    ):
        assert main([*base, *extra]) == 2, extra
        assert capsys.readouterr().err.count("\n") == 1
    assert main(["--home", str(tmp_path / "home"), "gc", "graveler://nope"]) == 3
    assert len(list(gv.repository("lake").store.list("data/"))) == 3
    gv.close()
