"""graveler's web UI: repositories, branches, the log, commits, comparisons and objects.

    graveler ui                       # http://127.0.0.1:8765, read-only
    graveler ui --allow-writes        # adds merge, revert and delete-branch actions

    from graveler.server.ui import UIOptions, create_app
    app = create_app(Graveler(), UIOptions(allow_writes=False))   # any ASGI server

The app is FastAPI rendering Jinja templates, with htmx (shipped in ``static/``) for the
parts that load lazily or page on; it needs the ``ui`` extra (``pip install graveler[ui]``).
Integrations that only link into a running UI use :class:`Links`, which needs nothing beyond
the standard library: names are imported lazily, so ``graveler.server.ui.links`` never pulls in the
web stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graveler.server.ui.app import create_app
    from graveler.server.ui.context import UIOptions
    from graveler.server.ui.links import Links

_EXPORTS = {
    "create_app": "graveler.server.ui.app",
    "UIOptions": "graveler.server.ui.context",
    "Links": "graveler.server.ui.links",
}
__all__ = ["Links", "UIOptions", "create_app"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'graveler.server.ui' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
