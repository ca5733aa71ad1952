"""graveler: Git for data lakes, embedded in the orchestrators data teams already run.

    from graveler import Graveler
    gv = Graveler(home=".graveler")
    repo = gv.create_repository("lake")
    repo.put("main", "raw/a.csv", b"x,y\\n1,2\\n")
    repo.commit("main", "first data")

The public API is the names below plus the modules :mod:`graveler.errors`, :mod:`graveler.uri`,
:mod:`graveler.config`, :mod:`graveler.gc`, :mod:`graveler.objectstore`, :mod:`graveler.extras`,
:mod:`graveler.runs` and :mod:`graveler.database` (each re-exports the module of the layer that
defines it), :mod:`graveler.tables.iceberg` (:class:`GravelerCatalog`) and
:mod:`graveler.server.ui` (the web UI as an ASGI app, and its links); everything else is
internal and may change. The integrations in ``providers/`` use nothing else
(``tests/test_layering.py`` checks it).

The package is one folder per layer, each importing only the ones below it (see
``docs/architecture.md``): :mod:`graveler.cli` and :mod:`graveler.server` (the interfaces),
:mod:`graveler.maintenance`, this facade (:mod:`graveler.client`,
:mod:`graveler.repository`), :mod:`graveler.tables`, :mod:`graveler.versioning`,
:mod:`graveler.views`, :mod:`graveler.storage` and :mod:`graveler.core`.

Top-level names are imported lazily so that ``import graveler`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graveler.client import Graveler, shared_client
    from graveler.core.config import ClientSettings
    from graveler.core.errors import GravelerError
    from graveler.core.hookevents import HookEvent, HookResult, HookRun
    from graveler.core.model import Branch, Commit, MergeResult, RangeSettings, ResolvedRef, Tag
    from graveler.core.model import Repository as RepositoryInfo
    from graveler.core.uri import GravelerURI
    from graveler.repository import Repository
    from graveler.storage.committed.merge import MergeStrategy
    from graveler.storage.entry import ObjectEntry
    from graveler.storage.objects import DATA_PREFIX, new_physical_address
    from graveler.versioning.conflicts import ConflictResolver, KeyConflict, Resolution
    from graveler.versioning.hooks.registry import HookRegistry
    from graveler.versioning.hooks.runners import HookContext
    from graveler.versioning.merge import MergeOptions
    from graveler.versioning.runs import Publication, Run
    from graveler.versioning.transaction import Transaction
    from graveler.versioning.writes import EntryAttributes
    from graveler.views.diff import ChangeType, Difference
    from graveler.views.listing import ListingPage

_EXPORTS = {
    "Branch": "graveler.core.model",
    "ChangeType": "graveler.views.diff",
    "ClientSettings": "graveler.core.config",
    "ConflictResolver": "graveler.versioning.conflicts",
    "Commit": "graveler.core.model",
    "DATA_PREFIX": "graveler.storage.objects",
    "Difference": "graveler.views.diff",
    "EntryAttributes": "graveler.versioning.writes",
    "Graveler": "graveler.client",
    "shared_client": "graveler.client",
    "GravelerError": "graveler.core.errors",
    "GravelerURI": "graveler.core.uri",
    "HookContext": "graveler.versioning.hooks.runners",
    "HookEvent": "graveler.core.hookevents",
    "HookRegistry": "graveler.versioning.hooks.registry",
    "HookResult": "graveler.core.hookevents",
    "HookRun": "graveler.core.hookevents",
    "KeyConflict": "graveler.versioning.conflicts",
    "ListingPage": "graveler.views.listing",
    "MergeOptions": "graveler.versioning.merge",
    "MergeResult": "graveler.core.model",
    "MergeStrategy": "graveler.storage.committed.merge",
    "Publication": "graveler.versioning.runs",
    "Run": "graveler.versioning.runs",
    "ObjectEntry": "graveler.storage.entry",
    "RangeSettings": "graveler.core.model",
    "Repository": "graveler.repository",
    "RepositoryInfo": ("graveler.core.model", "Repository"),
    "Resolution": "graveler.versioning.conflicts",
    "ResolvedRef": "graveler.core.model",
    "Tag": "graveler.core.model",
    "Transaction": "graveler.versioning.transaction",
    "new_physical_address": "graveler.storage.objects",
}

__all__ = [
    "DATA_PREFIX",
    "Branch",
    "ChangeType",
    "ClientSettings",
    "Commit",
    "ConflictResolver",
    "Difference",
    "EntryAttributes",
    "Graveler",
    "GravelerError",
    "GravelerURI",
    "HookContext",
    "HookEvent",
    "HookRegistry",
    "HookResult",
    "HookRun",
    "KeyConflict",
    "ListingPage",
    "MergeOptions",
    "MergeResult",
    "MergeStrategy",
    "ObjectEntry",
    "Publication",
    "RangeSettings",
    "Repository",
    "RepositoryInfo",
    "Resolution",
    "ResolvedRef",
    "Run",
    "Tag",
    "Transaction",
    "new_physical_address",
    "shared_client",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'graveler' has no attribute {name!r}")
    module, attribute = target if isinstance(target, tuple) else (target, name)
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
