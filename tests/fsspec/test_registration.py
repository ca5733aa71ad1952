"""Protocol registration: the ``fsspec.specs`` entry points declared in ``pyproject.toml``
(registered by ``conftest.py`` exactly as fsspec does for installed packages), and the
``lakefs`` alias that gives way to lakefs-spec when it is installed (it is: the
``lakefs-clients`` extra; tests/lakefs_clients drives it against ``graveler serve``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import fsspec
import graveler_fsspec.lakefs as lakefs_module
import lakefs_spec
from fsspec.registry import _import_class
from graveler_fsspec import GravelerFileSystem
from graveler_fsspec.lakefs import GravelerLakeFSFileSystem

from tests.fsspec.conftest import declared_entry_points


def test_pyproject_declares_both_protocols_and_they_import():
    points = declared_entry_points()
    assert set(points) == {"graveler", "lakefs"}
    assert _import_class(points["graveler"]) is GravelerFileSystem
    assert _import_class(points["lakefs"]) is lakefs_spec.LakeFSFileSystem  # installed here


def test_urls_resolve_through_the_registry(tmp_path):
    options = {"home": str(tmp_path / "h"), "database_url": f"sqlite:///{tmp_path}/r.db"}
    fs, path = fsspec.url_to_fs("graveler://lake/main/a.txt", **options)
    assert isinstance(fs, GravelerFileSystem) and path == "lake/main/a.txt"
    fs.client.create_repository("lake")
    with fsspec.open("graveler://lake/main/a.txt", "wt", **options) as f:
        f.write("text mode works")
    # lakefs:// through the registry is lakefs-spec's (installed); graveler's own class
    # still answers lakefs:// URLs when it is asked for by name
    assert fsspec.get_filesystem_class("lakefs") is lakefs_spec.LakeFSFileSystem
    lfs = GravelerLakeFSFileSystem(**options)
    lpath = lfs._strip_protocol("lakefs://lake/main/a.txt")
    assert lpath == "lake/main/a.txt"
    assert lfs.cat(lpath) == b"text mode works"
    assert lfs.unstrip_protocol(lpath) == "lakefs://lake/main/a.txt"
    assert fs.unstrip_protocol(path) == "graveler://lake/main/a.txt"
    GravelerFileSystem.clear_instance_cache()
    GravelerLakeFSFileSystem.clear_instance_cache()


def test_lakefs_gives_way_to_an_installed_lakefs_spec(tmp_path, monkeypatch):
    package = tmp_path / "site" / "lakefs_spec"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from fsspec import AbstractFileSystem\n"
        "class LakeFSFileSystem(AbstractFileSystem):\n    protocol = 'lakefs'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "lakefs_spec", raising=False)
    try:
        resolved = lakefs_module.resolve_lakefs_class()
        assert resolved.__module__ == "lakefs_spec" and resolved.__name__ == "LakeFSFileSystem"
    finally:
        sys.modules.pop("lakefs_spec", None)


def test_lakefs_is_graveler_when_lakefs_spec_is_absent():
    """Without lakefs-spec (hidden from a fresh interpreter), ``lakefs`` is graveler's."""
    code = (
        "import sys; sys.modules['lakefs_spec'] = None; "  # as if it were not installed
        "import graveler_fsspec.lakefs as m; "
        "print(m.LakeFSFileSystem.__module__, m.LakeFSFileSystem.__name__)"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'providers'}"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split() == ["graveler_fsspec.lakefs", "GravelerLakeFSFileSystem"]


def test_the_provider_loads_neither_orchestrators_nor_dataframe_libraries():
    """graveler_fsspec needs fsspec and the engine only (checked in a fresh interpreter)."""
    code = (
        "import sys, graveler_fsspec; "
        "print(sorted({'airflow','dagster','pyspark','pandas','polars','duckdb'} & "
        "{m.split('.')[0] for m in sys.modules}))"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'providers'}"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"
