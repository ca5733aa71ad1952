"""The CLI prints plainly (without importing rich) only what rich would print the same way
(``graveler.cli.plain``): checked on text and tables directly, and on every human-readable
command end to end, against the same command with every line handed to rich."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from graveler.cli import main, output, plain

#: (text, whether it may be printed plainly).
TEXTS = [
    ("plain words", True),
    ("trailing spaces   ", True),
    ("\n    a commit message\n", True),
    ("Date:   2026-11-22 10:30:15 UTC", True),
    ("Meta:   key = value with = signs", True),
    ("path/with spaces/and-dashes_and.dots", True),
    ("日本語のメッセージ", True),
    ("e\u0301 combining", True),
    ("ratio 1:2:3", True),
    ("[WIP] a message with markup", False),
    ("\\[escaped]", False),
    ("an emoji :smile: code", False),
    ("a number :100: code", False),
    ("a tab\there", False),
    ("a carriage\rreturn", False),
    ("a bell\x07", False),
]


def _rich(text: str) -> str:
    console = Console(file=io.StringIO(), highlight=False, soft_wrap=True)
    console.print(text)
    return console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize(("text", "is_plain"), TEXTS)
def test_plain_text_is_printed_as_rich_prints_it(text: str, is_plain: bool) -> None:
    assert plain.plain_text(text) == is_plain
    if is_plain:
        assert _rich(text) == text + "\n"
    else:  # rich changes it (or might): it goes to rich
        assert _rich(text) != text + "\n" or "[" in text


def test_no_emoji_code_looks_like_a_time() -> None:
    from rich._emoji_codes import EMOJI

    assert not [name for name in EMOJI if name.isdigit() and len(name) <= 2]


@pytest.mark.parametrize(
    ("columns", "rows"),
    [
        (["BRANCH", "COMMIT", "PROTECTED"], [["main", "0123456789ab", "yes"], ["dev", "ab", ""]]),
        (["", "PATH", "SIZE", "MODIFIED"], [["dir", "a/", "", ""], ["obj", "b", "12", "x"]]),
        (["TAG", "COMMIT"], []),
        (["A"], [["x" * 70]]),
    ],
)
def test_plain_tables_are_rich_tables(columns: list[str], rows: list[list[str]]) -> None:
    table = Table(show_edge=False, header_style="bold")
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    console = Console(file=io.StringIO(), highlight=False, soft_wrap=True, width=80)
    console.print(table)
    assert plain.plain_table(columns, rows, 80) == console.file.getvalue()  # type: ignore[attr-defined]
    assert plain.plain_table(columns, rows, 10) is None  # rich would wrap it
    assert plain.plain_table(columns, [[*row[:-1], "日本"] for row in rows] or [["["]], 80) is None


def _session(tmp_path: Path, odd: bool = True) -> list[list[str]]:
    """Commands whose human output covers every way the CLI prints: tables, commits, maps,
    messages; with ``odd``, user text with markup, emoji codes, tabs and non-ASCII."""
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "a.csv").write_text("x\n1\n")
    name = "[b] :smile:.txt" if odd else "b.txt"
    (data / "sub" / name).write_text("hello")
    one = tmp_path / "one.txt"
    one.write_text("1")
    lake = "graveler://lake"
    message, meta, run = (
        ("[WIP] load :smile:\tnow", "k=[v]", "run=日本") if odd else ("load", "k=v", "run=1")
    )
    return [
        ["repo", "create", lake],
        ["repo", "list"],
        ["branch", "create", f"{lake}/dev", "--source", f"{lake}/main"],
        ["fs", "upload", str(data), f"{lake}/dev/in/", "--recursive"],
        ["fs", "upload", str(one), f"{lake}/dev/one.txt"],
        ["diff", f"{lake}/dev"],
        ["commit", f"{lake}/dev", "-m", message, "--meta", meta],
        ["branch", "list", lake],
        ["fs", "ls", f"{lake}/dev/in/"],
        ["fs", "ls", f"{lake}/dev/", "--recursive"],
        ["fs", "stat", f"{lake}/dev/in/a.csv"],
        ["fs", "stat", f"{lake}/dev/in/sub/{name}"],
        ["fs", "cat", f"{lake}/dev/in/a.csv"],
        ["merge", f"{lake}/dev", f"{lake}/main", "--no-ff", "--meta", run],
        ["log", f"{lake}/main", "--amount", "10"],
        ["show", f"{lake}/main"],
        ["diff", f"{lake}/main~1", f"{lake}/main"],
        ["diff", f"{lake}/main", f"{lake}/main"],
        ["tag", "create", f"{lake}/v1", f"{lake}/main"],
        ["tag", "list", lake],
        ["fs", "rm", f"{lake}/dev/one.txt"],
        ["branch", "reset", f"{lake}/dev"],
        ["branch", "protect", f"{lake}/main"],
        ["branch", "list", lake],
        ["tag", "delete", f"{lake}/v1"],
        ["branch", "delete", f"{lake}/dev"],
    ]


def _outputs(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    printed = []
    for args in _session(tmp_path):
        assert main(["--home", str(home), *args]) == 0, args
        printed.append(capsys.readouterr().out)
    return printed


def test_every_human_output_is_what_rich_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("GRAVELER_COMMITTER", "tester [bot] :smile:")
    fast = _outputs(tmp_path / "fast", tmp_path / "f", capsys)
    monkeypatch.setattr(output, "plain_stream", lambda stream: False)  # every line to rich
    full = _outputs(tmp_path / "full", tmp_path / "r", capsys)

    def same_shape(text: str) -> str:  # IDs, addresses, times and temporary paths differ
        text = re.sub(r"data/[0-9a-v]{20}/[0-9a-v]{20}", "data/ADDRESS", text)
        text = re.sub(r"[0-9a-f]{12,64}", "ID", text)
        text = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(\+00:00)?", "TIME", text)
        for path, name in ((tmp_path / "fast", "HOME"), (tmp_path / "full", "HOME")):
            text = text.replace(str(path), name)
        return text.replace(str(tmp_path / "f"), "TMP").replace(str(tmp_path / "r"), "TMP")

    assert [same_shape(t) for t in fast] == [same_shape(t) for t in full]
    assert any("[WIP]" in t for t in fast) and any("日本" in t for t in fast)


def test_commands_print_into_a_pipe_without_rich(tmp_path: Path) -> None:
    """A whole session as separate processes, stdout a pipe: rich is never imported, and no
    command but the ones that need it imports SQLAlchemy."""
    home = tmp_path / "home"
    probe = (
        "import sys, runpy; sys.argv = ['graveler', *sys.argv[1:]]\n"
        "from graveler.cli import main\n"
        "code = main()\n"
        "heavy = sorted(m for m in ('rich', 'sqlalchemy', 'alembic', 'yaml') if m in sys.modules)\n"
        "sys.stderr.write('LOADED ' + ','.join(heavy) + '\\n')\n"
        "sys.exit(code)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env["COLUMNS"] = "300"  # the temporary paths are long: rich would wrap a narrower table
    for args in _session(tmp_path, odd=False):
        done = subprocess.run(
            [sys.executable, "-c", probe, "--home", str(home), *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, (args, done.stderr)
        loaded = done.stderr.strip().splitlines()[-1]
        expected = "LOADED alembic,sqlalchemy" if args[:2] == ["repo", "create"] else "LOADED "
        assert loaded.rstrip() == expected.rstrip(), (args, loaded)
    listing = subprocess.run(
        [
            sys.executable,
            "-m",
            "graveler",
            "--home",
            str(home),
            "--json",
            "log",
            "graveler://lake/main",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(listing.stdout)[0]["message"].startswith("Merge")
