"""The code blocks of README.md and the docs pages run (rules: ``tests/docs/blocks.py``).

Each page with runnable blocks gets its own process and scratch directory, so pages never see
each other's repositories, environment or Spark session.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import (
    RESULT_PREFIX,
    ROOT,
    Block,
    BlockError,
    extract,
    graveler_lines,
    page_blocks,
    pages,
    write_spec,
)

PAGES = pages()
RUNNABLE = [p for p in PAGES if any(b.kind != "text" for b in page_blocks(p))]


def _page_env(workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAVELER_", "AIRFLOW"))}
    paths = [str(ROOT), str(ROOT / "providers"), env.get("PYTHONPATH", "")]
    env.update(
        GRAVELER_HOME=str(workdir / ".graveler"),
        AIRFLOW_HOME=str(workdir / "airflow"),
        DAGSTER_HOME=str(workdir / "dagster"),
        PYTHONPATH=os.pathsep.join(p for p in paths if p),
        PYSPARK_PYTHON=sys.executable,
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        NO_COLOR="1",
    )
    (workdir / "dagster").mkdir(parents=True, exist_ok=True)
    return env


def run_blocks(
    blocks: list[Block], tmp: Path
) -> tuple[subprocess.CompletedProcess[str], list[list[object]]]:
    """Run blocks through the page runner in a fresh process; its result line, parsed."""
    workdir = tmp / "work"
    workdir.mkdir()
    write_spec(blocks, tmp / "page.json")
    done = subprocess.run(
        [sys.executable, "-m", "tests.docs.blocks", str(tmp / "page.json")],
        cwd=workdir,
        env=_page_env(workdir),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=540,
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(RESULT_PREFIX)]
    result = json.loads(lines[-1][len(RESULT_PREFIX) :]) if lines else []
    return done, result


def test_every_block_is_run_or_marked_text() -> None:
    unknown = []
    for page in PAGES:
        for block in page_blocks(page):
            try:
                _ = block.kind
            except BlockError as exc:
                unknown.append(str(exc))
    assert not unknown, "\n".join(unknown)
    assert len(PAGES) > 10 and len(RUNNABLE) > 8


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_blocks_run(page: Path, tmp_path: Path) -> None:
    blocks = page_blocks(page)
    done, result = run_blocks(blocks, tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-6000:]
    assert result == [[b.line, b.kind] for b in blocks]


SAMPLE = """\
# A page

```python
x = 1
```

!!! note
    ```bash
    graveler --help
    ```

~~~text
```python
not a block of its own
```
~~~

```python title="dags/a.py"
pass
```
"""


def test_extract_finds_indented_and_nested_fences() -> None:
    blocks = extract(SAMPLE, "sample.md")
    assert [(b.line, b.lang, b.title, b.kind) for b in blocks] == [
        (4, "python", None, "python"),
        (9, "bash", None, "shell"),
        (13, "text", None, "text"),
        (19, "python", "dags/a.py", "airflow-dag"),
    ]
    assert blocks[1].code == "graveler --help\n"
    assert "not a block of its own" in blocks[2].code


@pytest.mark.parametrize(
    "fence", ["```", "```console", "```sh", '```python title="x.py"', "```json"]
)
def test_blocks_neither_run_nor_text_are_refused(fence: str) -> None:
    (block,) = extract(f"{fence}\nx\n```\n", "sample.md")
    with pytest.raises(BlockError, match=r"sample\.md:2: fence"):
        _ = block.kind


def test_unclosed_fence_is_refused() -> None:
    with pytest.raises(BlockError, match="never closed"):
        extract("```python\nx = 1\n", "sample.md")


@pytest.mark.parametrize(
    ("code", "lang", "title", "expected"),
    [
        ("assert 1 == 2\n", "python", None, "sample.md"),
        ("graveler fs cat graveler://nowhere/main/x\necho unreachable\n", "bash", None, "exited 3"),
        ("make no-such-target\n", "bash", None, "exited 2"),
        ("python -m benchmarks no-such-suite\n", "bash", None, "exited 2"),
        ("import no_such_module_here\n", "python", "dags/broken.py", "DAG import errors"),
        ("defs = {}\n", "python", "definitions.py", "no `defs = dg.Definitions"),
    ],
)
def test_a_failing_block_fails_its_page(
    code: str, lang: str, title: str | None, expected: str, tmp_path: Path
) -> None:
    blocks = [Block("sample.md", 3, lang, title, code)]
    done, result = run_blocks(blocks, tmp_path)
    assert done.returncode != 0 and result == []
    assert expected in done.stderr
    assert "unreachable" not in done.stdout


def test_graveler_commands_in_text_blocks_parse() -> None:
    """A command shown but not run (a text block) still names options that exist: the
    README once showed ``graveler credentials create --json`` while ``--json`` went before
    the command only."""
    from graveler.cli.parser import build_parser

    bad = []
    checked = 0
    for page in PAGES:
        for block in page_blocks(page):
            if block.kind != "text":
                continue
            for args in graveler_lines(block):
                checked += 1
                try:
                    build_parser(args).parse_args(args)
                except SystemExit:
                    bad.append(f"{block.page}:{block.line}: graveler {' '.join(args)}")
    assert not bad, "\n".join(bad)
    assert checked > 5


def test_a_block_can_serve_and_talk_to_the_server(tmp_path: Path) -> None:
    code = (
        "graveler serve --port 8000 &\n"
        "curl -sf http://127.0.0.1:8000/_health > health.json\n"
        'python -c \'import json; assert json.load(open("health.json")) == {"status": "ok"}\'\n'
        'echo "$DOCS_PORT" > port.txt\n'
    )
    done, result = run_blocks([Block("sample.md", 3, "bash", None, code)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert result == [[3, "shell"]]
    port = int((tmp_path / "work" / "port.txt").read_text())
    assert port != 8000
    with pytest.raises(OSError):  # the server did not outlive its block
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
