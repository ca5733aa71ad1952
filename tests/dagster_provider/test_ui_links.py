"""Acceptance (web UI issue): in Dagster, when a graveler UI base URL is configured
(``GravelerResource.graveler_ui_url``), materialization metadata links open the object at its
commit in the UI; with none configured there is no link.

The links are followed in the real app (:func:`graveler.server.ui.create_app` over the same
database, through Starlette's test client): the object page and its preview answer 200 and show the
object, also after the merge sensor has merged and deleted the run branch. Importing the
provider (which builds the links with :mod:`graveler.server.ui.links`) does not import the web
stack.
"""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import dagster as dg
import pandas as pd
import pytest
from fastapi.testclient import TestClient
from graveler_dagster import GravelerResource, graveler_definitions
from graveler_dagster.lineage import RESTATES_KEY, UI_KEY

from graveler.client import Graveler
from graveler.core.errors import BranchNotFound
from graveler.server.ui import create_app
from graveler.server.ui.links import Links
from tests.dagster_provider.conftest import evaluate_run_sensor, make_resource

BASE = "http://127.0.0.1:8765"
ORDERS = pd.DataFrame({"id": [1, 2, 3], "amount": [10.0, 25.5, 7.25]})
CURRENT = {"frame": ORDERS}


@dg.asset
def orders() -> pd.DataFrame:
    return CURRENT["frame"]


@dg.asset
def broken(orders: pd.DataFrame) -> None:
    raise ValueError("validation failed")


@dg.asset(partitions_def=dg.StaticPartitionsDefinition(["2024-01-01", "2024-01-02"]))
def daily(context: dg.AssetExecutionContext) -> dict[str, list[int]]:
    return {key: [1, 2] for key in context.partition_keys}


@pytest.fixture
def linked(tmp_path: Path, sqlite_url: str) -> Iterator[GravelerResource]:
    """The tests' resource, with the UI base URL set."""
    plain = make_resource(tmp_path, sqlite_url)
    resource = GravelerResource(**{**plain.model_dump(), "graveler_ui_url": f"{BASE}/"})
    yield resource
    resource.close()


@pytest.fixture
def ui(linked: GravelerResource) -> Iterator[TestClient]:
    """The read-only web UI over the resource's database, in-process."""
    client = Graveler(home=linked.home, database_url=linked.database_url)
    try:
        yield TestClient(create_app(client), raise_server_exceptions=False)
    finally:
        client.close()


def path_and_query(url: str) -> str:
    """What a browser requests for ``url`` from the server at ``BASE``."""
    assert url.startswith(f"{BASE}/")
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def assert_shows_orders(ui: TestClient, url: str, commit: str) -> None:
    """The object page at ``url`` and its preview show ``orders`` at ``commit``."""
    page = ui.get(path_and_query(url))
    assert page.status_code == 200, page.text
    assert commit in page.text and "orders" in page.text
    preview_url = Links().preview("lake", commit, "orders")
    assert preview_url.replace("&", "&amp;") in page.text  # the page loads this preview
    preview = ui.get(preview_url)
    assert preview.status_code == 200, preview.text
    assert all(v in preview.text for v in ("amount", "25.5", "7.25"))


def test_materialization_links_to_the_object_at_its_commit(
    linked: GravelerResource, ui: TestClient, instance: dg.DagsterInstance
) -> None:
    pieces = graveler_definitions(linked)
    CURRENT["frame"] = ORDERS
    result = dg.materialize([orders], instance=instance, resources=pieces["resources"])
    meta = result.get_asset_materialization_events()[0].materialization.metadata
    commit = str(meta["graveler/commit"].value)
    link = meta[UI_KEY]
    assert isinstance(link, dg.UrlMetadataValue)
    assert link.url == f"{BASE}/repos/lake/object?ref={commit}&path=orders"
    branch = linked.run_branch_name(result.run_id)
    repo = linked.get_repository()
    assert repo.resolve(branch).commit.id == commit  # the commit, not the branch name
    assert_shows_orders(ui, link.url, commit)

    evaluate_run_sensor(pieces["sensors"][0], instance, result, pieces["resources"])
    with pytest.raises(BranchNotFound):
        repo.branch(branch)
    assert_shows_orders(ui, link.url, commit)  # still there once the run branch is gone


def test_a_restatement_links_to_the_targets_version(
    linked: GravelerResource, ui: TestClient, instance: dg.DagsterInstance
) -> None:
    """A failed run's materialization restated as main's version links to main's commit."""
    pieces = graveler_definitions(linked)
    merge_sensor, failure_sensor = pieces["sensors"]
    CURRENT["frame"] = ORDERS
    first = dg.materialize([orders], instance=instance, resources=pieces["resources"])
    evaluate_run_sensor(merge_sensor, instance, first, pieces["resources"])
    CURRENT["frame"] = ORDERS.head(1)
    failed = dg.materialize(
        [orders, broken], instance=instance, resources=pieces["resources"], raise_on_error=False
    )
    evaluate_run_sensor(failure_sensor, instance, failed, pieces["resources"])
    latest = instance.get_latest_materialization_event(dg.AssetKey("orders"))
    assert latest is not None and latest.asset_materialization is not None
    meta = latest.asset_materialization.metadata
    head = linked.get_repository().resolve("main").commit.id
    assert meta[RESTATES_KEY].value == failed.run_id
    assert meta[UI_KEY].value == f"{BASE}/repos/lake/object?ref={head}&path=orders"
    assert_shows_orders(ui, str(meta[UI_KEY].value), head)


def test_a_run_writing_several_partitions_links_to_the_folder(
    linked: GravelerResource, ui: TestClient, instance: dg.DagsterInstance
) -> None:
    pieces = graveler_definitions(linked)
    result = dg.materialize(
        [daily],
        instance=instance,
        resources=pieces["resources"],
        tags={
            "dagster/asset_partition_range_start": "2024-01-01",
            "dagster/asset_partition_range_end": "2024-01-02",
        },
    )
    meta = result.get_asset_materialization_events()[0].materialization.metadata
    commit = str(meta["graveler/commit"].value)
    url = str(meta[UI_KEY].value)
    assert url == f"{BASE}/repos/lake/tree?ref={commit}&prefix=daily%2F"
    page = ui.get(path_and_query(url))
    assert page.status_code == 200, page.text
    assert "2024-01-01" in page.text and "2024-01-02" in page.text


def test_no_link_without_a_ui_url(resource: GravelerResource, instance: dg.DagsterInstance) -> None:
    pieces = graveler_definitions(resource)
    CURRENT["frame"] = ORDERS
    try:
        result = dg.materialize([orders], instance=instance, resources=pieces["resources"])
        meta = result.get_asset_materialization_events()[0].materialization.metadata
        assert "graveler/uri" in meta and UI_KEY not in meta
    finally:
        resource.close()


def test_the_provider_does_not_import_the_web_stack() -> None:
    code = (
        "import sys, graveler_dagster, graveler.server.ui.links; "
        "print(sorted(m for m in ('fastapi', 'starlette', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
