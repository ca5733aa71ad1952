"""Architecture rules, checked on the source (docs/architecture.md, "What the tests enforce"):

* nothing under graveler/ imports an orchestrator, Spark, or a provider package;
* only backends import SQLAlchemy/Alembic (graveler/refs), boto3/botocore
  (graveler/objectstore/s3.py) or rocksdict (graveler/sstable/writer.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "graveler"
FORBIDDEN = {
    "airflow",
    "dagster",
    "pyspark",
    "graveler_airflow",
    "graveler_dagster",
    "graveler_spark",
    "graveler_fsspec",
}
BACKEND_ONLY = {
    "sqlalchemy": "refs/",
    "alembic": "refs/",
    "psycopg": "refs/",
    "boto3": "objectstore/s3.py",
    "botocore": "objectstore/s3.py",
    "rocksdict": "sstable/writer.py",
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


SOURCES = sorted(ROOT.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_engine_imports_respect_layers(path: Path):
    rel = path.relative_to(ROOT).as_posix()
    mods = imported_modules(path)
    assert not mods & FORBIDDEN, f"{rel} imports {mods & FORBIDDEN}"
    for module, allowed in BACKEND_ONLY.items():
        if module in mods:
            assert rel.startswith(allowed), f"{rel} imports {module}; only {allowed} may"


def test_the_check_sees_imports():
    assert {"os", "graveler"} <= imported_modules(ROOT / "client.py")
    assert len(SOURCES) > 30
