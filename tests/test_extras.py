"""Importing an integration whose library is not installed names the extra to install.

Each case runs in a fresh interpreter where the library is made unimportable, two ways: the
way Python documents for blocking an import (``sys.modules[name] = None``: ``find_spec``
returns None and ``import`` raises ``ModuleNotFoundError``) and a ``sys.meta_path`` finder
that raises ``ModuleNotFoundError`` for it, as an import hook reporting absence would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graveler.core.extras import EXTRAS, is_installed, require_extra

ROOT = Path(__file__).resolve().parent.parent

BLOCKERS = {
    "sys.modules": """
import sys
for name in BLOCKED:
    sys.modules[name] = None
""",
    "meta_path": """
import sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
""",
}

PROBE = """
import importlib, json
try:
    importlib.import_module(PACKAGE)
except ImportError as exc:
    print(json.dumps({"type": type(exc).__name__, "message": str(exc), "name": exc.name}))
else:
    print(json.dumps(None))
"""

# (what is imported, what is blocked, the extra, the package the message names)
CASES = [
    ("graveler_airflow", ["airflow"], "airflow", "graveler_airflow"),
    ("graveler_airflow.hooks.graveler", ["airflow"], "airflow", "graveler_airflow"),
    ("graveler_dagster", ["dagster"], "dagster", "graveler_dagster"),
    ("graveler_spark", ["pyspark"], "spark", "graveler_spark"),
    ("graveler_spark", ["pyarrow"], "spark", "graveler_spark"),
    ("pyspark_graveler", ["pyspark"], "spark", "graveler_spark"),
    ("graveler_fsspec", ["fsspec"], "fsspec", "graveler_fsspec"),
]


def import_in_fresh_process(
    module: str, blocked: list[str], blocker: str | None, scratch: Path
) -> object:
    """What ``import module`` raised (type, message, ``.name``) in a new interpreter whose
    ``blocked`` modules are made unimportable by ``blocker``; None when it succeeded.
    ``scratch`` is a directory the process may write into."""
    code = f"BLOCKED = {blocked!r}\nPACKAGE = {module!r}\n"
    code += (BLOCKERS[blocker] if blocker else "") + PROBE
    paths = [str(ROOT), str(ROOT / "providers"), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
    env["AIRFLOW_HOME"] = str(scratch / "airflow")  # importing Airflow writes its config there
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("blocker", sorted(BLOCKERS))
@pytest.mark.parametrize(("module", "blocked", "extra", "package"), CASES)
def test_missing_library_names_the_extra(
    module: str, blocked: list[str], extra: str, package: str, blocker: str, tmp_path: Path
) -> None:
    raised = import_in_fresh_process(module, blocked, blocker, tmp_path)
    assert raised == {
        "type": "ModuleNotFoundError",
        "message": f"{package} needs {blocked[0]!r}, which is not installed: "
        f"pip install 'graveler[{extra}]'",
        "name": blocked[0],
    }


@pytest.mark.parametrize("module", sorted({c[0] for c in CASES}))
def test_with_the_library_installed_the_import_succeeds(module: str, tmp_path: Path) -> None:
    assert import_in_fresh_process(module, [], None, tmp_path) is None


def test_require_extra_in_process() -> None:
    for extra, modules in EXTRAS.items():
        assert all(is_installed(m) for m in modules), extra  # make venv installs every extra
        require_extra(extra, package="x")
    assert not is_installed("graveler_no_such_library")
    EXTRAS["test-only"] = ("graveler_no_such_library", "os", "graveler_nor_this")
    try:
        with pytest.raises(ImportError) as info:
            require_extra("test-only", package="pkg")
    finally:
        del EXTRAS["test-only"]
    assert str(info.value) == (
        "pkg needs 'graveler_no_such_library' and 'graveler_nor_this', which are not "
        "installed: pip install 'graveler[test-only]'"
    )
    assert info.value.name == "graveler_no_such_library"
