"""Fixtures for the fsspec filesystem.

The ``fsspec.specs`` entry points are read from the worktree's ``pyproject.toml`` and
registered exactly as fsspec's ``process_entries`` does at import time, so the tests use the
declared dotted paths without reinstalling the package.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest
from graveler_fsspec import GravelerFileSystem

from graveler.client import Graveler
from graveler.repository import Repository

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def declared_entry_points() -> dict[str, str]:
    """``{protocol: "module:Class"}`` from ``[project.entry-points."fsspec.specs"]``."""
    with PYPROJECT.open("rb") as fh:
        project = tomllib.load(fh)["project"]
    return dict(project["entry-points"]["fsspec.specs"])


def pytest_configure(config: pytest.Config) -> None:
    for name, value in declared_entry_points().items():
        fsspec.register_implementation(name, value.replace(":", "."), clobber=True)


@pytest.fixture
def fs(gv: Graveler) -> Iterator[GravelerFileSystem]:
    """A filesystem over the test's client (``gv`` runs on SQLite and on PostgreSQL)."""
    filesystem = GravelerFileSystem(client=gv, skip_instance_cache=True)
    yield filesystem


@pytest.fixture
def lake(repo: Repository) -> Repository:
    """The ``lake`` repository of ``tests/conftest.py`` (namespace on local disk)."""
    return repo
