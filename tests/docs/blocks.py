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
    and name known suites). ``graveler serve`` (with or without ``&``) starts the server in
    the background on a free port and stops it when the block ends; ``aws`` and ``curl``
    wait until it answers and are sent to it where they name the port the block gave it
    (``http://127.0.0.1:8000``), so pages show the usual port and tests never collide on it.
``json``, ``yaml``, ``toml``, ``ini``, ``csv`` with a ``title="NAME"``
    A file the page's later blocks use: written to ``NAME`` in the scratch directory (``json``
    must parse).
``text``
    Shown, never run: command synopses, output samples, diagrams. A ``graveler ...`` line
    in one that is not a synopsis (no ``[``, ``|`` or ``...``) is still parsed by the CLI's
    own parser (:func:`graveler_lines`), so its options exist as written.

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
import shlex
import socket
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULT_PREFIX = "DOCS-RESULT "
FILE_LANGS = {"json", "yaml", "toml", "ini", "csv"}

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_ATTR = re.compile(r'(\w+)="([^"]*)"')

# Defined before every bash block: the commands that are checked rather than run, and a
# served graveler on a free port ($DOCS_PORT) for the ones that talk to one.
SHELL_PRELUDE = """\
make() { command make --no-print-directory -n -C "$DOCS_REPO" "$@" > /dev/null; }
python() {
  if [[ "${1:-} ${2:-}" == "-m benchmarks" ]]; then
    (cd "$DOCS_REPO" && command python "$@" --dry-run > /dev/null)
  else
    command python "$@"
  fi
}
graveler() {
  if [[ " $* " == *" serve "* ]]; then _docs_serve "$@"; else command graveler "$@"; fi
}
_docs_serve() {
  local args=() given=8000 value=""
  for a in "$@"; do
    if [[ -n $value ]]; then given=$a; args+=("$DOCS_PORT"); value=""; continue; fi
    case $a in
      --port) value=1; args+=("$a") ;;
      --port=*) given=${a#--port=}; args+=("--port=$DOCS_PORT") ;;
      *) args+=("$a") ;;
    esac
  done
  [[ " ${args[*]} " == *" --port"* ]] || args+=(--port "$DOCS_PORT")
  echo "$given" > .docs-served-port
  command graveler "${args[@]}" >> .docs-serve.log 2>&1 &
  echo $! >> .docs-serve.pids
  _docs_wait
}
_docs_wait() {
  for _ in $(seq 300); do
    command curl -s -o /dev/null "http://127.0.0.1:$DOCS_PORT/_health" && return 0
    sleep 0.1
  done
  echo "graveler serve did not answer:" >&2; cat .docs-serve.log >&2; return 1
}
_docs_to_server() {
  local tool=$1 given out=(); shift
  [[ -f .docs-served-port ]] && _docs_wait
  given=$(cat .docs-served-port 2>/dev/null || echo none)
  for a in "$@"; do out+=("${a//127.0.0.1:$given/127.0.0.1:$DOCS_PORT}"); done
  command "$tool" "${out[@]}"
}
aws() { _docs_to_server aws "$@"; }
curl() { _docs_to_server curl "$@"; }
_docs_stop() {
  if [[ -f .docs-serve.pids ]]; then
    kill $(cat .docs-serve.pids) 2>/dev/null || true
    wait 2>/dev/null || true
  fi
  rm -f .docs-serve.pids .docs-served-port
}
trap _docs_stop EXIT
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


def graveler_lines(block: Block) -> list[list[str]]:
    """The ``graveler ...`` commands a text block shows that are not synopses, as argument
    lists (comments and line continuations resolved)."""
    found = []
    text = block.code.replace("\\\n", " ")
    for line in text.splitlines():
        words = line.strip()
        if not words.startswith("graveler ") or any(m in words for m in ("[", "|", "...")):
            continue
        args = shlex.split(words, comments=True)[1:]
        found.append(args[:-1] if args[-1:] == ["&"] else args)
    return found


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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: ``graveler ... serve ... &``: the prelude's ``graveler`` puts the server in the background
#: itself (and waits until it answers), so the block's own ``&`` is dropped.
_SERVE_IN_BACKGROUND = re.compile(r"^(\s*graveler\b.*\bserve\b[^&#]*?)\s*&(\s*#.*)?$", re.M)


def _run_shell(block: Block, workdir: Path) -> None:
    env = dict(os.environ, DOCS_REPO=str(ROOT), DOCS_PORT=str(_free_port()))
    code = _SERVE_IN_BACKGROUND.sub(r"\1\2", block.code)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", SHELL_PRELUDE + code],
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
