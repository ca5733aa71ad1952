"""``format("graveler")`` with no ``register()`` call, from an activated virtualenv, for an
editable install (as ``make venv`` does it) and a regular one.

Each case makes a fresh venv, installs this checkout into it (no dependencies: those come from
the test's own environment through a path entry, which does not run that environment's
``.pth`` files, so nothing of the test's own install leaks in), and runs a child Python with
the venv activated (``VIRTUAL_ENV``, ``PATH``; no ``PYTHONPATH``, no ``PYSPARK_PYTHON``: Spark's
workers run the venv's ``python3``). The child reads a partitioned table under Spark's default
settings (pushdown off), filtering on the discovered partition column, then loads the JVM shim
the install shipped and writes with ``.partitionBy()``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import io, json, sys
    import pyarrow as pa, pyarrow.parquet as pq
    from pyspark.sql import SparkSession
    from graveler import Graveler

    tmp = sys.argv[1]
    url = f"sqlite:///{tmp}/refs.db"
    with Graveler(home=f"{tmp}/home", database_url=url) as gv:
        repo = gv.create_repository("lake", f"file://{tmp}/ns")
        for k in (0, 1):
            out = io.BytesIO()
            pq.write_table(pa.table({"id": [k, k + 2]}), out)
            repo.put("main", f"t/k={k}/part-0.parquet", out.getvalue())
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    opts = {"home": f"{tmp}/home", "database_url": url}
    back = spark.read.format("graveler").options(**opts).load("graveler://lake/main/t")
    rows = sorted((r.id, r.k) for r in back.filter("k = 1").collect())
    import graveler_spark
    assert graveler_spark.load_shim(spark)  # the installed jar: .partitionBy() works now
    (spark.range(4).selectExpr("id", "id % 2 AS k").write.format("graveler").options(**opts)
        .partitionBy("k").mode("append").save("graveler://lake/main/w"))
    with Graveler(home=f"{tmp}/home", database_url=url) as gv:
        written = gv.repository("lake").iter_objects("main", "w/")
        dirs = sorted({e.path.split("/")[1] for e in written})
    print(json.dumps({"columns": back.columns, "rows": rows, "dirs": dirs,
                      "module": graveler_spark.__file__}))
    spark.stop()
    """
)


def _venv(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fresh venv that sees this environment's packages, and its activated environment."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    child_python = venv / "bin" / "python"
    site = subprocess.run(
        [str(child_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    return venv, env


def _pip(venv: Path, *args: str) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-deps",
            *args,
        ],
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize("mode", ["editable", "regular"])
def test_format_is_found_without_register(tmp_path: Path, mode: str) -> None:
    venv, env = _venv(tmp_path)
    if mode == "editable":
        _pip(venv, "-e", str(ROOT))
        subprocess.run(["python", str(ROOT / "scripts" / "providers_pth.py")], env=env, check=True)
    else:
        _pip(venv, str(ROOT))
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        ["python", "-c", CHILD, str(work)],
        env=env,
        cwd=tmp_path,  # not the checkout: its packages must come from the install
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["columns"] == ["id", "k"]
    assert result["rows"] == [[1, 1], [3, 1]]
    assert result["dirs"] == ["k=0", "k=1"]
    installed = Path(result["module"]).resolve()
    if mode == "editable":
        assert installed == ROOT / "providers" / "graveler_spark" / "__init__.py"
    else:
        assert str(installed).startswith(str(venv.resolve()))
