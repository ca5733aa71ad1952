"""Nothing read from the lake is executed: the Dagster IO manager unpickles only what it wrote.

Reproduced before the fix: ``_read`` fell back to pickle for an object without
``dagster/format`` metadata, so a pickle uploaded at an asset's path on ``main`` (CLI
``fs upload``, fsspec, Spark) ran its code when a downstream asset loaded it.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from graveler_dagster import GravelerResource, graveler_definitions

from graveler.cli import main
from tests.dagster_provider.conftest import make_resource


class Payload:
    """Unpickling this writes a file: proof that bytes from the lake ran as code."""

    def __init__(self, proof: Path) -> None:
        self.proof = proof

    def __reduce__(self) -> Any:
        return (Path.write_text, (self.proof, "code from the lake ran"))


@dg.asset
def orders() -> dict[str, int]:
    return {"rows": 3}


@dg.asset
def summary(orders: dict[str, int]) -> int:
    return orders["rows"]


def materialize_summary(resource: GravelerResource, instance: dg.DagsterInstance, **kw: Any) -> Any:
    """Only ``summary``: its input ``orders`` is read from ``main``."""
    resources = graveler_definitions(resource, **kw)["resources"]
    return dg.materialize(
        [orders, summary], selection=[summary], instance=instance, resources=resources,
        raise_on_error=False,
    )  # fmt: skip


def errors_of(result: Any) -> str:
    return " ".join(
        e.event_specific_data.error.to_string() for e in result.all_events if e.is_step_failure
    )


def test_an_uploaded_pickle_is_refused_not_run(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    resource = make_resource(tmp_path, f"sqlite:///{tmp_path / 'graveler.db'}")
    proof = tmp_path / "proof"
    local = tmp_path / "orders.pkl"
    local.write_bytes(pickle.dumps(Payload(proof)))
    resource.get_repository()  # created, as Dagster would on first use
    args = ["--home", str(resource.home), "--database-url", str(resource.database_url)]
    assert main([*args, "fs", "upload", str(local), "graveler://lake/main/orders"]) == 0
    assert main([*args, "commit", "graveler://lake/main", "-m", "upload"]) == 0
    try:
        result = materialize_summary(resource, instance)
        assert not result.success
        assert not proof.exists(), "bytes uploaded to the lake were executed"
        message = errors_of(result)
        head = resource.get_repository().branch("main").commit_id  # inputs load at a pinned commit
        assert f"graveler://lake/{head}/orders" in message and "dagster/format" in message
        assert "Materialize the asset through the IO manager" in message
    finally:
        resource.close()


def test_forged_metadata_is_refused_when_pickles_are_signed(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    resource = make_resource(tmp_path, f"sqlite:///{tmp_path / 'graveler.db'}")
    proof = tmp_path / "proof"
    repo = resource.get_repository()
    forged = {"dagster/format": "pickle", "dagster/run_id": "a-run-that-never-was"}
    data = pickle.dumps(Payload(proof))
    repo.put("main", "orders", data, content_type="application/x-python-pickle", metadata=forged)
    repo.commit("main", "forged")
    try:
        result = materialize_summary(resource, instance, pickle_secret="s3cret-for-signing")
        assert not result.success and not proof.exists()
        assert "without a valid signature" in errors_of(result)
        # the IO manager's own, signed outputs load
        resources = graveler_definitions(resource, pickle_secret="s3cret-for-signing")["resources"]
        both = dg.materialize([orders, summary], instance=instance, resources=resources)
        assert both.success and both.output_for_node("summary") == 3
        branch = resource.run_branch_name(both.run_id)
        assert "dagster/pickle-hmac" in repo.stat(branch, "orders").metadata
    finally:
        resource.close()


def test_the_pickle_secret_is_not_shown(tmp_path: Path) -> None:
    resource = make_resource(tmp_path, f"sqlite:///{tmp_path / 'graveler.db'}")
    manager = graveler_definitions(resource, pickle_secret="s3cret-for-signing")["resources"]
    shown = repr(manager["io_manager"]) + str(manager["io_manager"])
    assert "s3cret-for-signing" not in shown and "pickle_secret" in shown


@pytest.fixture
def instance(tmp_path: Path) -> Any:
    home = tmp_path / "dagster_home"
    home.mkdir()
    with dg.DagsterInstance.local_temp(str(home)) as inst:
        yield inst
