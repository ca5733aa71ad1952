"""Fuzzed bad input (hypothesis): names, keys, ref expressions, URIs, metadata and CLI arguments.

Whatever comes in, the only exceptions are GravelerErrors (the CLI: exit codes 0-4 and one line
on stderr), nothing crashes, and a call that fails leaves no trace: refs, staging and the
namespace's objects are exactly as before. Runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from graveler.cli import main
from graveler.client import Graveler
from graveler.core import uri as uris
from graveler.core.errors import GravelerError
from graveler.repository import Repository
from graveler.storage.objectstore import open_object_store
from graveler.views.layers import merged_staging

TRICKY = [
    "", " ", ".", "..", "/", "a/", "/a", "a//b", "a/../b", "~", "^", "main~", "main^2",
    "main~999999", "main~1~1", "main^0", "@", "@{1}", "x.lock", "-x", "\x00", "a\x00b", "\x7f",
    "\ud800", "é/ü", "a" * 300, "k" * 1100, "main:x", "HEAD", "f" * 64, "0" * 64, "abcd",
    "graveler://", "lakefs://lake", "graveler://lake/main/../x", "graveler:///main", "s3://",
    "s3://ab", "s3://Bad_Bucket/x", "file:relative", "file://host/x", "mem://", "http://x/y",
    "dev", "main", "v1", "lake",
]  # fmt: skip
any_text = st.one_of(st.sampled_from(TRICKY), st.text(max_size=60))
anything = st.one_of(any_text, st.binary(max_size=16), st.integers(), st.none(), st.floats())
metadata = st.one_of(
    st.none(),
    st.dictionaries(anything, anything, max_size=3),
    st.dictionaries(any_text, any_text, max_size=3),
)


def snapshot(gv: Graveler) -> list[Any]:
    """Everything a failed call must leave untouched: refs, staged entries, stored objects."""
    state: list[Any] = []
    for info in gv.list_repositories():
        repo = gv.repository(info.name)
        for b in repo.list_branches():
            staged = list(merged_staging(repo.staging, b.tokens))
            sealed = len(b.sealed_tokens)
            state.append((info, b.name, b.commit_id, b.protected, sealed, staged))
        state.append(repo.list_tags())
        state.append(sorted(c.id for c in repo.refs.iter_commits(info.name)))
        state.append([(o.key, o.size) for o in repo.store.list()])
    return state


def fails_cleanly(gv: Graveler, call: Callable[[], object]) -> bool:
    """Run ``call``; if it raises, it must be a GravelerError and change nothing."""
    before = snapshot(gv)
    try:
        result = call()
        if hasattr(result, "__next__"):
            list(result)  # type: ignore[call-overload]
    except GravelerError:
        assert snapshot(gv) == before, "a failed call changed the state"
        return True
    return False


@pytest.fixture
def lake(repo: Repository) -> Repository:
    repo.put("main", "a.txt", b"a")
    repo.commit("main", "first")
    repo.create_tag("v1", "main")
    repo.put("main", "b.txt", b"b")
    repo.commit("main", "second")
    repo.create_branch("dev", "main")
    return repo


def fuzz(level: Any) -> settings:
    return settings(
        max_examples=level.fuzz_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        database=None,
    )


def test_names(lake, gv, level, figures):
    ops = {
        "create_branch": lambda n: lake.create_branch(n, "main"),
        "create_tag": lambda n: lake.create_tag(n, "main"),
        "delete_tag": lambda n: lake.delete_tag(n),
        "repository": lambda n: gv.repository(n),
        "create_repository": lambda n: gv.create_repository(n, "mem://fuzz-names"),
    }

    @fuzz(level)
    @given(op=st.sampled_from(sorted(ops)), name=anything)
    def check(op: str, name: Any) -> None:
        assume(name not in ("dev", "main", "v1"))
        refused = fails_cleanly(gv, lambda: ops[op](name))
        figures.add("bad input (fuzzed)", cases=1, refused=refused)

    check()


def test_keys_and_metadata(lake, gv, level, figures):
    ops: dict[str, Callable[[Any, Any], object]] = {
        "put": lambda k, m: lake.put("dev", k, b"data", metadata=m),
        "put_bad_data": lambda k, m: lake.put("dev", "ok.bin", m),
        "stat": lambda k, m: lake.stat("dev", k),
        "get": lambda k, m: lake.get("main", k),
        "delete": lambda k, m: lake.delete("dev", k),
        "delete_many": lambda k, m: lake.delete_many("dev", [k, m]),
        "list": lambda k, m: lake.list("main", k, delimiter=m),
        "iter": lambda k, m: lake.iter_objects("dev", k, after=m),
        "link": lambda k, m: lake.link("dev", "linked.bin", k, metadata=m),
        "commit": lambda k, m: lake.commit("dev", k, metadata=m),
    }

    @fuzz(level)
    @given(op=st.sampled_from(sorted(ops)), key=anything, meta=metadata)
    def check(op: str, key: Any, meta: Any) -> None:
        refused = fails_cleanly(gv, lambda: ops[op](key, meta))
        figures.add("bad input (fuzzed)", cases=1, refused=refused)

    check()


def test_ref_expressions(lake, gv, level, figures):
    ops: dict[str, Callable[[Any], object]] = {
        "resolve": lambda r: lake.resolve(r),
        "log": lambda r: lake.log(r, amount=3),
        "diff": lambda r: lake.diff(r, "main"),
        "get": lambda r: lake.get(r, "a.txt"),
        "merge": lambda r: lake.merge(r, "dev"),
        "branch_from": lambda r: lake.create_branch("from-ref", r),
        "revert": lambda r: lake.revert("dev", r),
    }

    @fuzz(level)
    @given(op=st.sampled_from(sorted(ops)), ref=anything)
    def check(op: str, ref: Any) -> None:
        assume(op != "revert" or ref not in ("main", "dev"))
        refused = fails_cleanly(gv, lambda: ops[op](ref))
        figures.add("bad input (fuzzed)", cases=1, refused=refused)
        if op == "branch_from" and not refused:
            lake.delete_branch("from-ref")

    check()


def test_uris(gv, tmp_path, level, figures, monkeypatch):
    # Creating a repository writes its ownership marker into the namespace: relative paths
    # land under tmp_path, and absolute ones are moved below it, never onto the real disk.
    monkeypatch.chdir(tmp_path)

    def inside(text: Any) -> Any:
        return f"{tmp_path}/abs{text}" if isinstance(text, str) and text.startswith("/") else text

    @fuzz(level)
    @given(text=anything)
    def check(text: Any) -> None:
        refused = 0
        for call in (
            lambda: uris.parse(text),
            lambda: open_object_store(text),
            lambda: gv.create_repository("fuzz-uri", inside(text)),
        ):
            refused += fails_cleanly(gv, call)
        if "fuzz-uri" in {r.name for r in gv.list_repositories()}:
            gv.delete_repository("fuzz-uri")
        figures.add("bad input (fuzzed)", cases=3, refused=refused)

    check()


CLI_WORDS = [
    "repo", "branch", "tag", "fs", "commit", "log", "show", "diff", "merge", "revert", "fsck",
    "refs", "create", "list", "protect", "cat", "stat", "ls", "dump", "upload",
    "graveler://lake", "graveler://lake/main", "graveler://lake/dev", "graveler://lake/v1",
    "graveler://lake/main/a.txt", "graveler://lake/dev/x/", "graveler://nope/main",
    "lakefs://lake/main", "graveler://lake/main~1", "graveler://lake/main^9",
    "--json", "-m", "--meta", "k=v", "=", "--recursive", "--strategy", "source-wins",
    "--amount", "-1", "2", "--source", "--prefix", "--verify-objects", "--parent-number",
    "--default-branch",
]  # fmt: skip
cli_token = st.one_of(
    st.sampled_from(CLI_WORDS), any_text.filter(lambda t: not t.startswith("-") and "\x00" not in t)
)


def test_cli_arguments(lake, gv, tmp_path, monkeypatch, capsys, level, figures):
    home = gv.home
    url = gv.database_url
    monkeypatch.chdir(tmp_path)  # relative paths resolve to an empty scratch directory

    @fuzz(level)
    @given(argv=st.lists(cli_token, max_size=7))
    def check(argv: list[str]) -> None:
        assume(not ({"upload", "dump"} & set(argv)))  # no reading local files, no dumps
        before = snapshot(gv)
        try:
            code = main(["--home", str(home), "--database-url", url, *argv])
        except SystemExit as exc:  # argparse: usage errors
            code = exc.code  # type: ignore[assignment]
        _, err = capsys.readouterr()
        assert code in (0, 1, 2, 3, 4), (argv, code, err)
        if code != 0:
            assert err.strip() and "Traceback" not in err, (argv, err)
            assert snapshot(gv) == before, f"failed command changed the state: {argv}"
        figures.add("bad input (fuzzed)", cases=1, refused=int(code != 0))

    check()
