"""graveler's web UI inside Airflow 3: a FastAPI app in Airflow's API server, behind Airflow's
authentication, and two views in Airflow's UI.

* ``/graveler/`` serves the UI (the same app as ``graveler ui``), every page requiring an
  authenticated Airflow user. It is read-only unless ``[graveler] ui_allow_writes = True``.
* "Graveler" under *Browse* shows it in Airflow's navigation.
* On a DAG run's page, a "Graveler" tab shows the run's data: its run branch while the run
  is going (named as :func:`graveler_airflow.run_branch.run_branch_name` names it), else the
  merge commit that published it (found by its lineage metadata on the default branch).

The client comes from the connection ``[graveler] ui_conn_id`` (default
``graveler_default``). Airflow loads plugins in every process (scheduler, workers), so this
module imports only Airflow's plugin class: the app (FastAPI, the UI, Airflow's security
module) is built on the first request the API server routes to it, and the client opened
then. The plugin is registered through the ``airflow.plugins`` entry point.

(No ``from __future__ import annotations`` here: FastAPI reads the route's annotations, and
the route's types are imported inside :func:`build_app`.)
"""

import threading
from typing import TYPE_CHECKING, Any

from airflow.plugins_manager import AirflowPlugin

if TYPE_CHECKING:
    from fastapi import FastAPI

    from graveler import Graveler

SECTION = "graveler"
PREFIX = (
    "/graveler"  # graveler.server.ui.links.AIRFLOW_PREFIX, kept literal: no import at load time
)
DAG_RUN_ROUTE = "/airflow/dag-run/{dag_id}/{run_id}"
Scope = dict[str, Any]


def open_client() -> "Graveler":
    """The client of the connection named by ``[graveler] ui_conn_id``."""
    from airflow.configuration import conf

    from graveler_airflow.hooks.graveler import GravelerHook

    conn_id = conf.get(SECTION, "ui_conn_id", fallback=GravelerHook.default_conn_name)
    return GravelerHook(conn_id).get_conn()


def build_app() -> "FastAPI":
    """The UI app with the DAG-run route, every route behind Airflow's authentication."""
    from airflow.api_fastapi.core_api.security import requires_authenticated
    from airflow.configuration import conf
    from fastapi import Depends, Request
    from starlette.responses import RedirectResponse

    from graveler.server.ui import Links, UIOptions, create_app
    from graveler_airflow.lineage import DAG_ID, RUN_ID
    from graveler_airflow.naming import DEFAULT_GROUP, run_branch_name

    allow_writes = conf.getboolean(SECTION, "ui_allow_writes", fallback=False)
    options = UIOptions(allow_writes=allow_writes, title="Airflow")
    app = create_app(open_client, options, dependencies=[Depends(requires_authenticated())])

    @app.get(DAG_RUN_ROUTE)
    def dag_run(request: Request, dag_id: str, run_id: str) -> RedirectResponse:
        """Where a DAG run's data is: its run branch (named as a ``GravelerRunBranch`` with its
        default group and prefix names it), or else the commit that published it."""
        links = Links(request.scope.get("root_path", ""))
        branch = run_branch_name(dag_id, run_id, group=DEFAULT_GROUP)
        found = links.find_run(branch, {DAG_ID: dag_id, RUN_ID: run_id})
        return RedirectResponse(found, status_code=303)

    return app


class LazyApp:
    """An ASGI app that builds :func:`build_app` on its first request."""

    def __init__(self) -> None:
        self._app: FastAPI | None = None
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if self._app is None:
            with self._lock:
                if self._app is None:
                    self._app = build_app()
        await self._app(scope, receive, send)


def external_views() -> list[dict[str, Any]]:
    """The navigation entry and the DAG run tab (Airflow's UI fills in ``{DAG_ID}`` and
    ``{RUN_ID}``)."""
    run_href = PREFIX + DAG_RUN_ROUTE.format(dag_id="{DAG_ID}", run_id="{RUN_ID}")
    return [
        {
            "name": "Graveler",
            "href": f"{PREFIX}/",
            "destination": "nav",
            "category": "browse",
            "url_route": "graveler",
        },
        {
            "name": "Graveler",
            "href": run_href,
            "destination": "dag_run",
            "url_route": "graveler-dag-run",
        },
    ]


class GravelerUIPlugin(AirflowPlugin):
    """graveler's UI at ``/graveler``, a navigation entry and a DAG run tab."""

    name = "graveler_ui"
    fastapi_apps = [{"app": LazyApp(), "url_prefix": PREFIX, "name": "graveler"}]
    external_views = external_views()
