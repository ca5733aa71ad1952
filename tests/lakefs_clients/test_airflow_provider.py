"""airflow-provider-lakefs (0.48.0, written for Airflow 2) beside the project's Airflow 3.

It installs with the project's constraints, and its hook (``LakeFSHook``, which drives
lakefs-sdk) works against ``graveler serve`` through a real Airflow 3 connection (an
``AIRFLOW_CONN_*`` variable, resolved by Airflow's own secrets backends). Its operators and
sensors cannot be imported on Airflow 3: they import ``apply_defaults``, which Airflow 3
removed; docs/lakefs-clients.md quotes the error, and the last test pins it.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lakefs_clients.server import LakeFS, unique

OPERATOR_MODULES = (
    "lakefs_provider.operators.create_branch_operator",
    "lakefs_provider.operators.commit_operator",
    "lakefs_provider.operators.merge_operator",
    "lakefs_provider.operators.upload_operator",
    "lakefs_provider.sensors.file_sensor",
    "lakefs_provider.sensors.commit_sensor",
)


@pytest.fixture(scope="module")
def airflow_env(server: LakeFS, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """An Airflow home of its own (unless Airflow is already configured in this process) and
    two connections: ``lakefs_default`` (host with ``/api/v1``, which the hook hands to
    lakefs-sdk) and ``lakefs_login`` (the bare address, which ``test_connection`` extends)."""
    home: Path = tmp_path_factory.mktemp("airflow-home")
    with pytest.MonkeyPatch.context() as mp:
        if "airflow" not in sys.modules and "AIRFLOW_HOME" not in os.environ:
            mp.setenv("AIRFLOW_HOME", str(home))
        mp.setenv("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
        for conn_id, host in (("LAKEFS_DEFAULT", server.api), ("LAKEFS_LOGIN", server.url)):
            connection = {
                "conn_type": "lakefs",
                "host": host,
                "login": server.key.access_key_id,
                "password": server.key.secret_access_key,
            }
            mp.setenv(f"AIRFLOW_CONN_{conn_id}", json.dumps(connection))
        yield


@pytest.fixture(scope="module")
def hook(airflow_env: None) -> Any:
    from lakefs_provider.hooks.lakefs_hook import LakeFSHook

    return LakeFSHook("lakefs_default")


@pytest.fixture(scope="module")
def repo(hook: Any) -> str:
    from lakefs_sdk.models import RepositoryCreation

    name = unique("airflow")
    hook.get_conn().repositories_api.create_repository(
        RepositoryCreation(name=name, storage_namespace=f"local://{name}")
    )
    return name


def test_hook_branch_upload_commit_merge(hook: Any, repo: str) -> None:
    assert hook.create_branch(repo, "etl", "main")
    hook.upload(repo, "etl", "out/day=1/part-0.csv", b"a,b\n1,2\n")
    stat = hook.stat_object(repo, "etl", "out/day=1/part-0.csv")
    assert stat["size_bytes"] == 8 and stat["path"] == "out/day=1/part-0.csv"
    assert bytes(hook.get_object(repo, "etl", "out/day=1/part-0.csv")) == b"a,b\n1,2\n"

    commit_id = hook.commit(repo, "etl", "daily load", metadata={"dag": "etl"})
    assert hook.get_branch_commit_id(repo, "etl") == commit_id
    commit = hook.get_commit(repo, commit_id)
    assert commit["message"] == "daily load" and commit["metadata"] == {"dag": "etl"}
    messages = [c["message"] for c in hook.log_commits(repo, "etl", size=1)]
    assert messages[0] == "daily load" and len(messages) == 2  # paged one by one

    merged = hook.merge(repo, "etl", "main", "publish etl", metadata={"run": "1"})
    assert hook.get_branch_commit_id(repo, "main") == merged
    assert hook.get_commit(repo, "main")["metadata"]["run"] == "1"
    hook.delete_branch(repo, "etl")
    with pytest.raises(Exception, match=r"(?i)not found"):
        hook.get_branch_commit_id(repo, "etl")


def test_hook_connection_test(airflow_env: None) -> None:
    """What the connection form's Test button runs: a login with the access key."""
    from lakefs_provider.hooks.lakefs_hook import LakeFSHook

    ok, message = LakeFSHook("lakefs_login").test_connection()
    assert ok, message


def test_operators_and_sensors_need_airflow_2(airflow_env: None) -> None:
    """The documented limit (docs/lakefs-clients.md): every operator and sensor module of
    0.48.0 fails to import on Airflow 3 with the same error."""
    for name in OPERATOR_MODULES:
        with pytest.raises(ImportError, match="cannot import name 'apply_defaults'"):
            importlib.import_module(name)
