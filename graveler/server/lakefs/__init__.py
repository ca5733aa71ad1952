"""lakeFS's REST API (``/api/v1``) over graveler, so that lakeFS's clients (lakectl, the
``lakefs`` and ``lakefs-sdk`` Python packages, lakefs-spec, the lakeFS Hadoop FileSystem)
work against ``graveler serve``.

The operations and their shapes are those of lakeFS's OpenAPI document (release line 1.84);
what each does is graveler's engine, through the public facade (``Graveler``,
``Repository``). One module per resource group holds its handlers and its routes:

* :mod:`.system`: config, health, set-up, login, the current user (501 for the rest of
  lakeFS's auth service);
* :mod:`.repositories`: repositories, their settings (branch protection), sample data;
* :mod:`.branches`: branches and tags, reset, revert, cherry-pick;
* :mod:`.refs`: commits, log, diff, merge, merge base;
* :mod:`.objects`: upload, download, stat, list, delete, copy, user metadata;
* :mod:`.staging`: physical addresses for direct writes, linking, presigned multipart;
* :mod:`.imports`, :mod:`.actions`: import and hook runs.

The plumbing: :mod:`.app` (the ASGI application), :mod:`.routing`, :mod:`.http` (a call
and its reply), :mod:`.caller` (credentials), :mod:`.errors` (graveler's errors as lakeFS's
answers), :mod:`.encode` (graveler's types as lakeFS's schemas), :mod:`.storage`
(namespaces as lakeFS spells them).
"""

from __future__ import annotations

from typing import Any

from graveler.client import Graveler
from graveler.server.auth import Authenticator
from graveler.server.lakefs.app import PREFIX, LakeFSApi
from graveler.server.lakefs.routing import Route
from graveler.server.lakefs.service import Service
from graveler.server.lakefs.storage import Storage

__all__ = ["PREFIX", "create_app", "routes"]


def routes() -> list[Route]:
    """Every operation served."""
    from graveler.server.lakefs import (
        actions,
        branches,
        imports,
        objects,
        refs,
        repositories,
        staging,
        system,
    )

    return [
        *system.ROUTES,
        *repositories.ROUTES,
        *branches.ROUTES,
        *refs.ROUTES,
        *objects.ROUTES,
        *staging.ROUTES,
        *imports.ROUTES,
        *actions.ROUTES,
    ]


def create_app(client: Graveler, authenticator: Authenticator, namespace_root: str | None) -> Any:
    """The API's ASGI application over one client (one per server worker);
    ``namespace_root``: where the server puts new repositories (``--namespace-root``)."""
    storage = Storage.of(client.default_namespace("x"), namespace_root)
    return LakeFSApi(Service(client, authenticator, storage), routes())
