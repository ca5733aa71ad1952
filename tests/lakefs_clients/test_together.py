"""Several of lakeFS's clients at once against one ``graveler serve`` deployed as a team runs it:
PostgreSQL, two worker processes. While lakefs-sdk writers each load a branch of their own,
commit it and merge it into ``main`` (the merges race for ``main``), lakefs-spec runs a
transaction on ``main``, boto3 writes a branch through the S3 gateway and a reader lists
``main`` over and over. Afterwards ``main`` holds every object of every run exactly as
written, its log holds every merge, no answer was a 5xx, and every answer kept lakeFS's OpenAPI
document (the contract tap, conftest.py)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import boto3
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.models import BranchCreation, CommitCreation, Merge, RepositoryCreation
from lakefs_spec import LakeFSFileSystem

from graveler.storage.refs.scratch import scratch_schema
from tests.lakefs_clients.server import LakeFS, lakefs_server, unique

WRITERS = 3
OBJECTS = 8


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, _isolated: None) -> Iterator[LakeFS]:
    """This module's server: PostgreSQL (a scratch schema) and two workers."""
    url = os.environ.get("GRAVELER_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("GRAVELER_TEST_POSTGRES_URL is not set (make test sets it)")
    home = tmp_path_factory.mktemp("together") / "home"
    with scratch_schema(url, "lk_") as schema_url:
        env = {"GRAVELER_AUTH_ENCRYPT_KEY": "lakefs-clients-together"}  # keys in a shared DB
        with lakefs_server(home, "--workers", "2", env=env, database_url=schema_url) as server:
            yield server


def _sdk(server: LakeFS) -> LakeFSClient:
    """A client of its own (lakefs-sdk's clients are not shared between threads here)."""
    configuration = lakefs_sdk.Configuration(
        host=server.api, username=server.key.access_key_id, password=server.key.secret_access_key
    )
    return LakeFSClient(configuration)


def _payload(run: str, n: int) -> bytes:
    return f"id,run,n\n{n},{run},{n * n}\n".encode()


def _sdk_run(server: LakeFS, repo: str, run: str) -> str:
    """One pipeline run through lakefs-sdk: a branch, uploads, a commit, a merge into main.
    Returns the merge's reference."""
    client = _sdk(server)
    client.branches_api.create_branch(repo, BranchCreation(name=run, source="main"))
    for n in range(OBJECTS):
        path = f"runs/{run}/part-{n}.csv"
        client.objects_api.upload_object(repo, run, path, content=_payload(run, n))
    client.commits_api.commit(repo, run, CommitCreation(message=f"load {run}"))
    merged = client.refs_api.merge_into_branch(repo, run, "main", merge=Merge(message=run))
    return str(merged.reference)


def _spec_run(server: LakeFS, repo: str) -> None:
    """A lakefs-spec transaction on main: an ephemeral branch, a commit, merged on success."""
    fs = LakeFSFileSystem(
        host=server.url, username=server.key.access_key_id, password=server.key.secret_access_key
    )
    with fs.transaction(repo, "main") as tx:
        fs.pipe(f"lakefs://{repo}/{tx.branch.id}/spec/summary.txt", b"written by lakefs-spec\n")
        tx.commit(message="lakefs-spec transaction")


def _gateway_run(server: LakeFS, repo: str) -> None:
    """boto3 through the S3 gateway onto branch ``s3-run``, then a merge through the API."""
    s3 = boto3.client("s3", endpoint_url=server.served.url, **server.key.boto)
    for n in range(OBJECTS):
        s3.put_object(Bucket=repo, Key=f"s3-run/gateway/part-{n}.csv", Body=_payload("s3", n))
    client = _sdk(server)
    client.commits_api.commit(repo, "s3-run", CommitCreation(message="load through S3"))
    client.refs_api.merge_into_branch(repo, "s3-run", "main", merge=Merge(message="s3-run"))


def _reader(server: LakeFS, repo: str, stop: threading.Event) -> int:
    """Lists main until told to stop; every listing is sorted and holds README.md."""
    client, listings = _sdk(server), 0
    while not stop.is_set():
        found = client.objects_api.list_objects(repo, "main", amount=1000).results
        paths = [o.path for o in found]
        assert paths == sorted(paths) and "README.md" in paths
        listings += 1
    return listings


def test_clients_at_once_on_postgres_with_two_workers(server: LakeFS) -> None:
    client = _sdk(server)
    repo = unique("together")
    client.repositories_api.create_repository(
        RepositoryCreation(name=repo, storage_namespace=f"local://{repo}", default_branch="main")
    )
    client.objects_api.upload_object(repo, "main", "README.md", content=b"shared lake\n")
    client.commits_api.commit(repo, "main", CommitCreation(message="start"))
    client.branches_api.create_branch(repo, BranchCreation(name="s3-run", source="main"))
    runs = [f"run-{i}" for i in range(WRITERS)]
    stop = threading.Event()
    jobs: list[Callable[[], object]] = [
        *[lambda run=run: _sdk_run(server, repo, run) for run in runs],  # type: ignore[misc]
        lambda: _spec_run(server, repo),
        lambda: _gateway_run(server, repo),
    ]
    with ThreadPoolExecutor(len(jobs) + 1) as pool:
        reading = pool.submit(_reader, server, repo, stop)
        results = [f.result() for f in [pool.submit(job) for job in jobs]]
        stop.set()
        assert reading.result() > 0
    expected = {"README.md": b"shared lake\n", "spec/summary.txt": b"written by lakefs-spec\n"}
    for run in runs:
        expected.update({f"runs/{run}/part-{n}.csv": _payload(run, n) for n in range(OBJECTS)})
    expected.update({f"gateway/part-{n}.csv": _payload("s3", n) for n in range(OBJECTS)})
    listed = client.objects_api.list_objects(repo, "main", amount=1000).results
    assert sorted(o.path for o in listed) == sorted(expected)
    for path, body in expected.items():
        assert bytes(client.objects_api.get_object(repo, "main", path)) == body, path
    log = client.refs_api.log_commits(repo, "main", amount=100).results
    messages = {c.message for c in log}
    assert {*runs, "s3-run", "start"} <= messages
    assert {str(r) for r in results[:WRITERS]} <= {c.id for c in log}
    errors = [k for k in server.tap.checked if k.rsplit("-> ", 1)[-1].startswith("5")]
    assert not errors, errors
