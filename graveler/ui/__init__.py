"""graveler's web UI: repositories, branches, the log, commits, comparisons and objects.

    graveler ui                       # http://127.0.0.1:8765, read-only
    graveler ui --allow-writes        # adds merge, revert and delete-branch buttons

The app (:func:`graveler.ui.app.create_app`) is a FastAPI application rendering Jinja templates,
with htmx (shipped in ``static/``) for lazy and paged parts; it needs the ``ui`` extra
(``pip install graveler[ui]``). Orchestrator integrations link into it with
:class:`graveler.ui.links.Links`, which needs nothing beyond the standard library, so this
package's ``__init__`` imports nothing.
"""

from __future__ import annotations
