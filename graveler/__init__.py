"""graveler: Git for data lakes, embedded in the orchestrators data teams already run.

    from graveler import Graveler
    gv = Graveler(home=".graveler")
    repo = gv.create_repository("lake")
    repo.put("main", "raw/a.csv", b"x,y\\n1,2\\n")
    repo.commit("main", "first data")

Top-level names are imported lazily so that engine-only users do not load SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graveler.client import Graveler
    from graveler.entry import ObjectEntry
    from graveler.errors import GravelerError
    from graveler.model import Branch, Commit, Tag
    from graveler.repository import Repository

_EXPORTS = {
    "Graveler": "graveler.client",
    "ObjectEntry": "graveler.entry",
    "GravelerError": "graveler.errors",
    "Branch": "graveler.model",
    "Commit": "graveler.model",
    "Tag": "graveler.model",
    "Repository": "graveler.repository",
}

__all__ = [
    "Branch",
    "Commit",
    "Graveler",
    "GravelerError",
    "ObjectEntry",
    "Repository",
    "Tag",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'graveler' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
