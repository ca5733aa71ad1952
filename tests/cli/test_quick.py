"""``graveler repo list`` answered without the engine (``graveler.cli.quick``): the output must
be exactly the full command's, and anything it cannot answer exactly goes the full way."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from graveler.cli import quick, registry
from graveler.cli.output import Output
from graveler.cli.parser import build_parser
from graveler.client import Graveler


def _both(home: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """(quick output, full output) of ``graveler --home HOME [args] repo list``."""
    parsed = build_parser().parse_args(["--home", str(home), *args, "repo", "list"])
    assert quick.answer(parsed) == 0
    fast = capsys.readouterr().out
    assert registry.dispatch(parsed, Output(parsed.json)) == 0
    return fast, capsys.readouterr().out


@pytest.mark.parametrize("count", [0, 1, 3])
def test_the_quick_answer_is_the_full_answer(tmp_path, capsys, monkeypatch, count):
    monkeypatch.setenv("COLUMNS", "200")
    home = tmp_path / "home"
    with Graveler(home=home) as gv:
        for i in range(count):
            gv.create_repository(f"repo-{i}", (tmp_path / f"ns-{i}").as_uri())
    fast, full = _both(home, capsys=capsys)
    assert fast == full
    fast, full = _both(home, "--json", capsys=capsys)
    assert fast == full


def test_what_it_cannot_answer_exactly_goes_the_full_way(tmp_path, monkeypatch):
    home = tmp_path / "home"
    parse = build_parser().parse_args
    assert quick.answer(parse(["--home", str(home), "repo", "list"])) is None  # no database
    with Graveler(home=home) as gv:
        gv.create_repository("lake", (tmp_path / "ns").as_uri())
    args = ["--home", str(home), "repo", "list"]
    monkeypatch.setenv("COLUMNS", "30")  # rich would wrap the table
    assert quick.answer(parse(args)) is None
    monkeypatch.setenv("COLUMNS", "200")
    pg = "postgresql+psycopg://u:p@127.0.0.1:1/db"
    assert quick.answer(parse(["--database-url", pg, "repo", "list"])) is None
    assert quick.answer(parse(["--home", str(home), "branch", "list", "graveler://lake"])) is None
    with sqlite3.connect(home / "graveler.db") as conn:
        conn.execute("UPDATE graveler_alembic_version SET version_num = 'newer'")
    assert quick.answer(parse(args)) is None


def test_the_command_starts_without_the_engine(tmp_path):
    """``repo list`` must not import SQLAlchemy or rich (what start-up costs most)."""
    home = tmp_path / "home"
    with Graveler(home=home) as gv:
        gv.create_repository("lake", (tmp_path / "ns").as_uri())
    probe = (
        "import sys; from graveler.cli import main; rc = main(['--home', sys.argv[1], 'repo', "
        "'list']); heavy = sorted(m for m in ('sqlalchemy', 'rich', 'graveler.client') "
        "if m in sys.modules); print(rc, heavy, file=sys.stderr)"
    )
    env = {**os.environ, "COLUMNS": "300"}  # the namespace path is long: no wrapping
    done = subprocess.run(
        [sys.executable, "-c", probe, str(home)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert done.stderr.strip() == "0 []"
    assert "lake" in done.stdout


def test_a_read_does_not_load_what_only_writes_and_merges_use(tmp_path):
    """``fs stat`` reads one entry: the merge, diff and tree-writing modules stay unloaded."""
    home = tmp_path / "home"
    with Graveler(home=home) as gv:
        repo = gv.create_repository("lake", (tmp_path / "ns").as_uri())
        repo.put("main", "a.txt", b"hi")
        repo.commit("main", "one object")
    writers = [
        "graveler.storage.committed." + name for name in ("merge", "diff", "apply", "writer")
    ]
    probe = (
        "import sys; from graveler.cli import main; "
        "rc = main(['--home', sys.argv[1], '--json', 'fs', 'stat', 'graveler://lake/main/a.txt']); "
        f"print(rc, sorted(m for m in {writers!r} if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(home)], capture_output=True, text=True, check=True
    )
    assert done.stderr.strip() == "0 []"
    assert '"a.txt"' in done.stdout
