"""The command line parsed with a parser holding only the command that runs
(``build_parser(argv)``) gives exactly what the whole parser gives: the same arguments, or the
same usage error and exit code."""

from __future__ import annotations

import pytest

from graveler.cli.parser import COMMANDS, build_parser, command_of

ARGVS = [
    ["repo", "create", "graveler://lake"],
    ["--home", "h", "repo", "create", "graveler://lake", "file:///x", "--default-branch", "dev"],
    ["--home=h", "--json", "repo", "list"],
    ["--ho", "h", "--database-url", "sqlite:///x", "branch", "list", "graveler://lake"],
    ["branch", "revert", "graveler://lake/main", "a", "b", "-m", "1", "--meta", "k=v"],
    ["branch", "reset", "graveler://lake/main", "--hard", "main~1"],
    ["branch", "prune", "graveler://lake", "--older-than", "7d", "--prefix", "airflow-"],
    ["tag", "create", "graveler://lake/v1", "graveler://lake/main"],
    ["fs", "upload", "f", "graveler://lake/main/f", "-r"],
    ["fs", "stat", "graveler://lake/main/f", "--staged"],
    ["fs", "ls", "graveler://lake/main/", "--recursive"],
    ["commit", "graveler://lake/main", "-m", "msg", "--meta", "a=1", "--meta", "b=2"],
    ["log", "graveler://lake/main", "-n", "10", "--objects", "a,b", "--since", "2026-01-01Z"],
    ["cherry-pick", "graveler://lake/x", "graveler://lake/main", "--allow-empty"],
    ["revert", "graveler://lake/main", "graveler://lake/main"],
    ["show", "graveler://lake/main"],
    ["diff", "graveler://lake/main~1", "graveler://lake/main"],
    ["merge", "graveler://lake/a", "graveler://lake/b", "--no-ff", "--squash", "--meta", "x=1"],
    ["actions", "runs", "list", "graveler://lake", "--amount", "5"],
    ["actions", "validate", "a.yaml"],
    ["import", "--from", "file:///d", "--to", "graveler://lake/main/p", "-m", "m"],
    ["fsck", "graveler://lake", "--verify-objects"],
    ["refs", "restore", "graveler://lake", "file:///ns", "--dump", "d"],
    ["gc", "graveler://lake", "--dry-run", "--branch-retention", "main=3"],
    ["ui", "--port", "0", "--allow-writes"],
]
ERRORS = [
    ["fs", "stat"],
    ["fs", "frobnicate", "x"],
    ["merge", "a", "b", "--no-ff", "--ff-only"],
    ["log", "graveler://lake/main", "--amount", "many"],
    ["ui", "--port", "70000"],
    ["commit", "graveler://lake/main"],
    ["--home"],
    ["frobnicate"],
    [],
    ["--jso", "fs", "ls"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(a)[:40])
def test_the_command_alone_parses_as_the_whole(argv: list[str]) -> None:
    assert command_of(argv) in COMMANDS
    whole = build_parser().parse_args(argv)
    alone_parser = build_parser(argv)
    assert vars(alone_parser.parse_args(argv)) == vars(whole)
    subparsers = alone_parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(subparsers) == [command_of(argv)]


@pytest.mark.parametrize("argv", ERRORS, ids=lambda a: " ".join(a)[:40] or "empty")
def test_errors_are_the_same(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    results = []
    for parser in (build_parser(), build_parser(argv)):
        with pytest.raises(SystemExit) as exited:
            parser.parse_args(argv)
        results.append((exited.value.code, capsys.readouterr()))
    assert results[0] == results[1]
    assert results[0][0] == 2


def test_help_and_doubtful_words_get_the_whole_parser() -> None:
    for argv in (
        ["fs", "stat", "-h"],
        ["--help"],
        ["--", "fs"],
        ["--x", "fs"],
        ["--home"],
        ["nope", "fs"],
        ["-j", "fs"],
    ):
        assert command_of(argv) is None, argv
    assert command_of(["--home", "fs", "log", "x"]) == "log"  # "fs" is --home's value
