"""graveler: Git for data lakes, embedded in the orchestrators data teams already run.

    from graveler import Graveler
    gv = Graveler(home=".graveler")
    repo = gv.create_repository("lake")
    repo.put("main", "raw/a.csv", b"x,y\\n1,2\\n")
    repo.commit("main", "first data")

The public API is the names below plus the modules :mod:`graveler.errors`, :mod:`graveler.uri`,
:mod:`graveler.config`, :mod:`graveler.gc`, :mod:`graveler.objectstore`, :mod:`graveler.extras`,
:mod:`graveler.runs` and :mod:`graveler.database`; everything else is internal and may
change. The integrations in ``providers/`` use nothing else (``tests/test_layering.py`` checks
it).

Top-level names are imported lazily so that ``import graveler`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graveler.client import Graveler, shared_client
    from graveler.committed.merge import MergeStrategy
    from graveler.config import ClientSettings
    from graveler.conflicts import ConflictResolver, KeyConflict, Resolution
    from graveler.entry import ObjectEntry
    from graveler.errors import GravelerError
    from graveler.hookevents import HookEvent, HookResult, HookRun
    from graveler.hooks.registry import HookRegistry
    from graveler.hooks.runners import HookContext
    from graveler.listing import ListingPage
    from graveler.merges import MergeOptions
    from graveler.model import Branch, Commit, MergeResult, RangeSettings, ResolvedRef, Tag
    from graveler.model import Repository as RepositoryInfo
    from graveler.objects import DATA_PREFIX, new_physical_address
    from graveler.operations import ChangeType, Difference
    from graveler.repository import Repository
    from graveler.runs import Publication, Run
    from graveler.transaction import Transaction
    from graveler.uri import GravelerURI
    from graveler.writes import EntryAttributes

_EXPORTS = {
    "Branch": "graveler.model",
    "ChangeType": "graveler.operations",
    "ClientSettings": "graveler.config",
    "ConflictResolver": "graveler.conflicts",
    "Commit": "graveler.model",
    "DATA_PREFIX": "graveler.objects",
    "Difference": "graveler.operations",
    "EntryAttributes": "graveler.writes",
    "Graveler": "graveler.client",
    "shared_client": "graveler.client",
    "GravelerError": "graveler.errors",
    "GravelerURI": "graveler.uri",
    "HookContext": "graveler.hooks.runners",
    "HookEvent": "graveler.hookevents",
    "HookRegistry": "graveler.hooks.registry",
    "HookResult": "graveler.hookevents",
    "HookRun": "graveler.hookevents",
    "KeyConflict": "graveler.conflicts",
    "ListingPage": "graveler.listing",
    "MergeOptions": "graveler.merges",
    "MergeResult": "graveler.model",
    "MergeStrategy": "graveler.committed.merge",
    "Publication": "graveler.runs",
    "Run": "graveler.runs",
    "ObjectEntry": "graveler.entry",
    "RangeSettings": "graveler.model",
    "Repository": "graveler.repository",
    "RepositoryInfo": ("graveler.model", "Repository"),
    "Resolution": "graveler.conflicts",
    "ResolvedRef": "graveler.model",
    "Tag": "graveler.model",
    "Transaction": "graveler.transaction",
    "new_physical_address": "graveler.objects",
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
