"""Every fenced code block of ``README.md`` and ``docs/**/*.md``, found and run.

The fence's info string decides what happens to a block; there is no other way to skip one:

``python``
    Executed with ``exec`` in the page's own Python process. The blocks of one page run in
    order and share one namespace, the page's scratch directory as working directory and a
    fresh ``GRAVELER_HOME`` in it. Tracebacks name the Markdown file and line.
``python title="dags/NAME.py"``
    An Airflow DAG file: written to ``dags/NAME.py`` in the scratch directory and parsed by
    Airflow's ``DagBag``, which must report no import error and at least one DAG. (No DAG
    run: a DAG run needs Airflow's metadata database and scheduler, which ``tests/airflow``
    covers with the example DAG.)
``python title="definitions.py"`` (any title ending in ``definitions.py``)
    Dagster definitions: imported from that file, whose ``defs`` must be a
    ``dagster.Definitions`` that ``Definitions.validate_loadable`` accepts. (No run: the
    merge-on-success sensors need Dagster's daemon, which ``tests/dagster_provider`` covers.)
``bash``
    Run by ``bash -euo pipefail`` in the scratch directory, after the page's earlier blocks,
    with this virtualenv's ``bin`` first on ``PATH``: every ``graveler ...`` line is the real
    CLI in a subprocess and a non-zero exit fails the block. Two commands are too long for a
    test and are checked instead of run, through shell functions defined before the block:
    ``make TARGET`` runs ``make -n TARGET`` in the checkout (the target exists and its recipe
    expands), and ``python -m benchmarks ARGS`` runs with ``--dry-run`` (the arguments parse
    and name known suites).
``json``, ``yaml``, ``toml``, ``ini``, ``csv`` with a ``title="NAME"``
    A file the page's later blocks use: written to ``NAME`` in the scratch directory (``json``
    must parse).
``text``
    Shown, never run: command synopses, output samples, diagrams.

Any other info string, or none, is an error (``BlockError``), so a block is run, checked, or
explicitly marked ``text``. Python blocks need the extras ``make venv`` installs (Spark
examples start a ``local[2]`` session of their own).

``python -m tests.docs.blocks PAGE.json`` is the page runner the tests start, one process
per page; it prints ``DOCS-RESULT <json>`` (the blocks it ran) as its last line.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULT_PREFIX = "DOCS-RESULT "
FILE_LANGS = {"json", "yaml", "toml", "ini", "csv"}

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_ATTR = re.compile(r'(\w+)="([^"]*)"')

# Defined before every bash block: the two commands that are checked rather than run.
SHELL_PRELUDE = """\
make() { command make --no-print-directory -n -C "$DOCS_REPO" "$@" > /dev/null; }
python() {
  if [[ "${1:-} ${2:-}" == "-m benchmarks" ]]; then
    (cd "$DOCS_REPO" && command python "$@" --dry-run > /dev/null)
  else
    command python "$@"
  fi
}
"""


class BlockError(ValueError):
    """A block whose fence says nothing this runner knows how to run or show."""


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its fence info and its text (indentation removed)."""

    page: str
    line: int  # 1-based line of the block's first content line
    lang: str
    title: str | None
    code: str

    @property
    def kind(self) -> str:
        """``python``, ``airflow-dag``, ``dagster-definitions``, ``shell``, ``file`` or
        ``text``; raises :class:`BlockError` for anything else."""
        if self.lang == "text":
            return "text"
        if self.lang == "python" and self.title is None:
            return "python"
        if self.lang == "python" and self.title and self.title.startswith("dags/"):
            return "airflow-dag"
        if self.lang == "python" and self.title and self.title.endswith("definitions.py"):
            return "dagster-definitions"
        if self.lang == "bash" and self.title is None:
            return "shell"
        if self.lang in FILE_LANGS and self.title:
            return "file"
        raise BlockError(
            f"{self.page}:{self.line}: fence {self.lang or '(none)'!r}"
            f"{f' title={self.title!r}' if self.title else ''} is neither run nor marked text "
            "(see tests/docs/blocks.py)"
        )


def extract(text: str, page: str) -> list[Block]:
    """The fenced blocks of a Markdown text, including those indented inside admonitions."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m["indent"], m["fence"], m["info"].strip()
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            line = lines[j]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            j += 1
        if j == len(lines):
            raise BlockError(f"{page}:{i + 1}: fence never closed")
        lang = info.split(maxsplit=1)[0].lstrip(".{") if info else ""
        attrs = dict(_ATTR.findall(info))
        blocks.append(Block(page, i + 2, lang, attrs.get("title"), "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown page of the docs site."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def page_blocks(path: Path, root: Path = ROOT) -> list[Block]:
    return extract(path.read_text(), path.relative_to(root).as_posix())


# --- the page runner (runs inside the page's own process) ------------------------------------


def _run_python(block: Block, namespace: dict[str, object]) -> None:
    source = "\n" * (block.line - 1) + block.code
    exec(compile(source, str(ROOT / block.page), "exec"), namespace)


def _write(block: Block, workdir: Path) -> Path:
    assert block.title
    path = workdir / block.title
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(block.code)
    return path


def _run_airflow_dag(block: Block, workdir: Path) -> None:
    from airflow.dag_processing.dagbag import DagBag

    path = _write(block, workdir)
    bag = DagBag(dag_folder=str(path), safe_mode=False)
    if bag.import_errors:
        raise AssertionError(f"{block.page}:{block.line}: DAG import errors {bag.import_errors}")
    if not bag.dags:
        raise AssertionError(f"{block.page}:{block.line}: the DAG file defines no DAG")
    print(f"{block.title}: DAGs {sorted(bag.dags)}")


def _run_dagster_definitions(block: Block, workdir: Path) -> None:
    import dagster as dg

    path = _write(block, workdir)
    spec = importlib.util.spec_from_file_location(f"docs_definitions_{block.line}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    defs = getattr(module, "defs", None)
    if not isinstance(defs, dg.Definitions):
        raise AssertionError(f"{block.page}:{block.line}: no `defs = dg.Definitions(...)`")
    dg.Definitions.validate_loadable(defs)
    assets, sensors = list(defs.assets or []), list(defs.sensors or [])
    print(f"{block.title}: {len(assets)} assets, {len(sensors)} sensors")


def _run_shell(block: Block, workdir: Path) -> None:
    env = dict(os.environ, DOCS_REPO=str(ROOT))
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", SHELL_PRELUDE + block.code],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        raise AssertionError(f"{block.page}:{block.line}: bash block exited {done.returncode}")


def run_page(blocks: list[Block], workdir: Path) -> list[tuple[int, str]]:
    """Run one page's blocks in order; returns ``(line, kind)`` of each block run or shown."""
    namespace: dict[str, object] = {"__name__": "__docs__"}
    done: list[tuple[int, str]] = []
    for block in blocks:
        kind = block.kind
        if kind == "python":
            _run_python(block, namespace)
        elif kind == "airflow-dag":
            _run_airflow_dag(block, workdir)
        elif kind == "dagster-definitions":
            _run_dagster_definitions(block, workdir)
        elif kind == "shell":
            _run_shell(block, workdir)
        elif kind == "file":
            path = _write(block, workdir)
            if block.lang == "json":
                json.loads(path.read_text())
        done.append((block.line, kind))
    return done


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text())
    blocks = [Block(**b) for b in spec["blocks"]]
    done = run_page(blocks, Path.cwd())
    sys.stdout.flush()
    print("\n" + RESULT_PREFIX + json.dumps(done), flush=True)
    return 0


def write_spec(blocks: list[Block], path: Path) -> None:
    """The page runner's input: the blocks to run, in order."""
    path.write_text(json.dumps({"blocks": [asdict(b) for b in blocks]}))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
