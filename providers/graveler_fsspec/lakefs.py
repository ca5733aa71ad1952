"""Target of the ``lakefs`` fsspec entry point.

fsspec lets entry points override its built-in table, which maps ``lakefs`` to lakefs-spec.
So that installing graveler never hijacks ``lakefs://`` from a real lakeFS client, this module
resolves to ``lakefs_spec.LakeFSFileSystem`` whenever lakefs-spec is importable, and to
graveler's filesystem (naming its paths ``lakefs://``) only when nothing else claims them.
"""

from __future__ import annotations

import importlib
import importlib.util

from graveler_fsspec.filesystem import GravelerFileSystem

LAKEFS_SPEC_CLASS = "lakefs_spec.LakeFSFileSystem"


class GravelerLakeFSFileSystem(GravelerFileSystem):
    """Graveler's filesystem answering ``lakefs://`` URIs."""

    protocol = ("lakefs", "graveler")


def resolve_lakefs_class() -> type:
    """lakefs-spec's filesystem if it is installed, else :class:`GravelerLakeFSFileSystem`."""
    module_name, _, class_name = LAKEFS_SPEC_CLASS.rpartition(".")
    if importlib.util.find_spec(module_name) is None:
        return GravelerLakeFSFileSystem
    cls: type = getattr(importlib.import_module(module_name), class_name)
    return cls


LakeFSFileSystem = resolve_lakefs_class()
