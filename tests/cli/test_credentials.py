"""``graveler credentials`` as people and scripts use it: ``--json`` after the subcommand,
whole key IDs in the table, and a start-up like every other command's.

Reproduced before the fix: ``graveler credentials create --json`` (as the README showed it)
failed with a usage error; ``credentials list`` cut key IDs to ``GRVL6BQSOA3ENXY…`` at 80
columns; ``credentials create`` took 1.3-2.5 s against about 0.2 s for other commands, of
which about 1.4 s was importing SQLAlchemy for the access-key table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graveler.cli import main
from graveler.client import Graveler
from graveler.core.errors import AlreadyExists, NotFound
from graveler.core.model import AccessKey

PROBE = (
    "import sys\n"
    "from graveler.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stderr.write('SQLALCHEMY ' + str('sqlalchemy' in sys.modules) + '\\n')\n"
    "sys.exit(code)\n"
)


def _cli(home: Path, *args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAVELER_")}
    env.update(COLUMNS=str(columns))
    env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-c", PROBE, "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )


def test_json_goes_before_or_after_the_subcommand(tmp_path: Path):
    made = _cli(tmp_path, "credentials", "create", "--json")
    key = json.loads(made.stdout)
    assert set(key) == {"access_key_id", "secret_access_key"}
    listed = json.loads(_cli(tmp_path, "credentials", "list", "--json").stdout)
    assert [k["access_key_id"] for k in listed] == [key["access_key_id"]]
    assert json.loads(_cli(tmp_path, "--json", "credentials", "list").stdout) == listed
    assert "ACCESS KEY ID" in _cli(tmp_path, "credentials", "list").stdout  # no --json: a table


def test_json_after_any_subcommand(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    home = ["--home", str(tmp_path)]
    assert main([*home, "repo", "create", "graveler://lake", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "lake"
    assert main([*home, "branch", "list", "graveler://lake", "--json"]) == 0
    assert [b["name"] for b in json.loads(capsys.readouterr().out)] == ["main"]
    assert main([*home, "log", "graveler://lake/main", "--amount", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["message"] == "Repository created"


def test_the_commands_do_not_import_sqlalchemy(tmp_path: Path):
    created = _cli(tmp_path, "--json", "credentials", "create")
    key = json.loads(created.stdout)["access_key_id"]
    for done in (
        _cli(tmp_path, "--json", "credentials", "create"),  # the database exists now
        _cli(tmp_path, "credentials", "list"),
        _cli(tmp_path, "credentials", "delete", key),
    ):
        assert done.stderr.strip().splitlines()[-1] == "SQLALCHEMY False", done.args


@pytest.mark.parametrize("columns", [80, 50])
def test_the_table_shows_whole_key_ids(tmp_path: Path, columns: int):
    keys = [json.loads(_cli(tmp_path, "--json", "credentials", "create").stdout) for _ in "ab"]
    _cli(tmp_path, "credentials", "create", "--description", "the nightly loads of every table")
    table = _cli(tmp_path, "credentials", "list", columns=columns).stdout
    for key in keys:
        assert key["access_key_id"] in table
    assert "…" not in table.splitlines()[2].split("│")[0]


def test_both_stores_read_each_others_keys(tmp_path: Path):
    """The embedded store (the CLI's, on SQLite) and the SQLAlchemy store (PostgreSQL's, and
    SQLite's for servers that open one) keep the same rows."""
    from graveler.storage.refs.sql_server import SqlAccessKeyStore
    from graveler.storage.refs.sqlite_keys import SqliteAccessKeyStore

    with Graveler(tmp_path / "home") as gv:
        path = gv.database_url[len("sqlite:///") :]
        embedded, full = SqliteAccessKeyStore(path), SqlAccessKeyStore(gv.database_url)
        when = datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC)
        one = AccessKey("GRVLONE", b"\x00sealed", ("lake", "other"), True, False, "one", when)
        two = AccessKey("GRVLTWO", b"\xffsealed", None, False, True, "", when)
        embedded.add(one)
        full.add(two)
        assert full.get("GRVLONE") == one and embedded.get("GRVLTWO") == two
        assert embedded.list() == full.list() == [one, two]
        with pytest.raises(AlreadyExists):
            embedded.add(two)
        embedded.delete("GRVLTWO")
        with pytest.raises(NotFound):
            full.get("GRVLTWO")
        with pytest.raises(NotFound):
            embedded.delete("GRVLTWO")
        embedded.close()
        full.close()
