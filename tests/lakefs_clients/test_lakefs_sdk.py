"""lakefs-sdk, the client generated from lakeFS's OpenAPI document, against ``graveler serve``:
repositories, branches, uploads, commits, diffs, merges, tags and imports, and the errors
lakeFS's clients rely on. Every answer also passes the contract tap (conftest.py)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException, NotFoundException
from lakefs_sdk.models import (
    BranchCreation,
    CommitCreation,
    ImportCreation,
    ImportLocation,
    Merge,
    RepositoryCreation,
    TagCreation,
)

from tests.lakefs_clients.server import LakeFS, unique


@contextlib.contextmanager
def answered(status: int) -> Iterator[None]:
    """The call raises lakefs-sdk's error for HTTP ``status`` (409 has no class of its own)."""
    with pytest.raises(ApiException) as caught:
        yield
    assert caught.value.status == status, caught.value


@pytest.fixture(scope="module")
def client(server: LakeFS) -> LakeFSClient:
    configuration = lakefs_sdk.Configuration(
        host=server.api,
        username=server.key.access_key_id,
        password=server.key.secret_access_key,
    )
    return LakeFSClient(configuration)


@pytest.fixture
def repo(client: LakeFSClient) -> str:
    name = unique("sdk")
    client.repositories_api.create_repository(
        RepositoryCreation(name=name, storage_namespace=f"local://{name}", default_branch="main")
    )
    return name


def test_server_identity(client: LakeFSClient) -> None:
    config = client.config_api.get_config()
    assert config.version_config is not None and config.version_config.version
    storage = config.storage_config_list or []
    single = config.storage_config
    assert single is not None or storage
    client.health_check_api.health_check()
    user = client.auth_api.get_current_user().user
    assert user.id


def test_repositories(client: LakeFSClient, repo: str) -> None:
    found = client.repositories_api.get_repository(repo)
    assert found.id == repo and found.default_branch == "main"
    assert found.storage_namespace == f"local://{repo}"
    listed = client.repositories_api.list_repositories(prefix=repo)
    assert [r.id for r in listed.results] == [repo]
    assert listed.pagination.has_more is False
    with answered(409):
        client.repositories_api.create_repository(
            RepositoryCreation(name=repo, storage_namespace=f"local://{repo}-again")
        )
    other = unique("sdk-gone")
    client.repositories_api.create_repository(
        RepositoryCreation(name=other, storage_namespace=f"local://{other}")
    )
    client.repositories_api.delete_repository(other)
    with pytest.raises(NotFoundException):
        client.repositories_api.get_repository(other)


def test_branches_uploads_commits(client: LakeFSClient, repo: str) -> None:
    branches, objects, commits = client.branches_api, client.objects_api, client.commits_api
    ref = branches.create_branch(repo, BranchCreation(name="dev", source="main"))
    assert isinstance(ref, str) and ref
    with answered(409):
        branches.create_branch(repo, BranchCreation(name="dev", source="main"))

    stats = objects.upload_object(repo, "dev", "data/a.csv", content=b"id,v\n1,2\n")
    assert stats.path == "data/a.csv" and stats.size_bytes == 9 and stats.checksum
    objects.upload_object(repo, "dev", "data/b.bin", content=bytes(range(256)) * 400)
    assert bytes(objects.get_object(repo, "dev", "data/a.csv")) == b"id,v\n1,2\n"
    stat = objects.stat_object(repo, "dev", "data/b.bin")
    assert stat.size_bytes == 102400 and stat.path_type == "object"
    part = objects.get_object(repo, "dev", "data/b.bin", range="bytes=256-511")
    assert bytes(part) == bytes(range(256))

    changes = branches.diff_branch(repo, "dev").results
    assert [(c.path, c.type) for c in changes] == [("data/a.csv", "added"), ("data/b.bin", "added")]
    commit = commits.commit(
        repo, "dev", CommitCreation(message="two files", metadata={"who": "sdk"})
    )
    assert commit.message == "two files" and commit.metadata == {"who": "sdk"}
    assert branches.get_branch(repo, "dev").commit_id == commit.id
    assert commits.get_commit(repo, commit.id).parents == [
        branches.get_branch(repo, "main").commit_id
    ]
    assert branches.diff_branch(repo, "dev").results == []

    listing = objects.list_objects(repo, "dev", prefix="data/", amount=1)
    assert [o.path for o in listing.results] == ["data/a.csv"] and listing.pagination.has_more
    rest = objects.list_objects(repo, "dev", prefix="data/", after=listing.pagination.next_offset)
    assert [o.path for o in rest.results] == ["data/b.bin"]
    top = objects.list_objects(repo, "dev", delimiter="/")
    assert [(o.path, o.path_type) for o in top.results] == [("data/", "common_prefix")]
    log = client.refs_api.log_commits(repo, "dev", amount=2).results
    assert log[0].id == commit.id and len(log) == 2

    with pytest.raises(NotFoundException):
        objects.stat_object(repo, "dev", "data/none")
    objects.delete_object(repo, "dev", "data/a.csv")
    with pytest.raises(NotFoundException):
        objects.get_object(repo, "dev", "data/a.csv")


def test_diff_merge_and_tags(client: LakeFSClient, repo: str) -> None:
    objects, refs = client.objects_api, client.refs_api
    objects.upload_object(repo, "main", "keep.txt", content=b"k")
    base = client.commits_api.commit(repo, "main", CommitCreation(message="base"))
    client.branches_api.create_branch(repo, BranchCreation(name="feature", source="main"))
    objects.upload_object(repo, "feature", "new.txt", content=b"n")
    objects.upload_object(repo, "feature", "keep.txt", content=b"changed")
    client.commits_api.commit(repo, "feature", CommitCreation(message="feature work"))

    diff = refs.diff_refs(repo, "main", "feature").results
    assert [(d.path, d.type) for d in diff] == [("keep.txt", "changed"), ("new.txt", "added")]
    merged = refs.merge_into_branch(
        repo, "feature", "main", merge=Merge(message="merge feature", metadata={"m": "1"})
    )
    head = client.commits_api.get_commit(repo, "main")
    assert merged.reference == head.id and len(head.parents) == 2
    assert bytes(objects.get_object(repo, "main", "keep.txt")) == b"changed"
    assert refs.diff_refs(repo, "main", "feature").results == []

    tag = client.tags_api.create_tag(repo, TagCreation(id="v1", ref=base.id))
    assert tag.id == "v1" and tag.commit_id == base.id
    client.tags_api.create_tag(repo, TagCreation(id="v2", ref="main"))
    assert [t.id for t in client.tags_api.list_tags(repo).results] == ["v1", "v2"]
    assert bytes(objects.get_object(repo, "v1", "keep.txt")) == b"k"
    with answered(409):
        client.tags_api.create_tag(repo, TagCreation(id="v1", ref="main"))
    client.tags_api.delete_tag(repo, "v2")
    with pytest.raises(NotFoundException):
        client.tags_api.get_tag(repo, "v2")


def test_conflicting_merge_is_refused(client: LakeFSClient, repo: str) -> None:
    objects, commits = client.objects_api, client.commits_api
    objects.upload_object(repo, "main", "f.txt", content=b"0")
    commits.commit(repo, "main", CommitCreation(message="base"))
    client.branches_api.create_branch(repo, BranchCreation(name="side", source="main"))
    objects.upload_object(repo, "side", "f.txt", content=b"side")
    commits.commit(repo, "side", CommitCreation(message="side"))
    objects.upload_object(repo, "main", "f.txt", content=b"main")
    commits.commit(repo, "main", CommitCreation(message="main"))
    with answered(409):
        client.refs_api.merge_into_branch(repo, "side", "main")
    merged = client.refs_api.merge_into_branch(
        repo, "side", "main", merge=Merge(strategy="source-wins")
    )
    assert merged.reference
    assert bytes(objects.get_object(repo, "main", "f.txt")) == b"side"


def test_import_from_the_servers_disk(client: LakeFSClient, repo: str, tmp_path: Path) -> None:
    source = tmp_path / unique("import-src")
    for name, data in {"a.csv": b"1", "nested/b.csv": b"22", "nested/c.csv": b"333"}.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_bytes(data)
    creation = ImportCreation(
        paths=[
            ImportLocation(type="common_prefix", path=f"local://{source}/", destination="imported/")
        ],
        commit=CommitCreation(message="import", metadata={"source": "disk"}),
    )
    started = client.import_api.import_start(repo, "main", creation)
    deadline = time.monotonic() + 60
    while True:
        status = client.import_api.import_status(repo, "main", started.id)
        if status.completed or status.error is not None or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert status.error is None and status.completed and status.ingested_objects == 3
    assert status.commit is not None and status.commit.message == "import"
    listed = client.objects_api.list_objects(repo, "main", prefix="imported/").results
    assert [(o.path, o.size_bytes) for o in listed] == [
        ("imported/a.csv", 1),
        ("imported/nested/b.csv", 2),
        ("imported/nested/c.csv", 3),
    ]
    assert bytes(client.objects_api.get_object(repo, "main", "imported/nested/c.csv")) == b"333"


def test_wrong_credentials_are_refused(server: LakeFS) -> None:
    configuration = lakefs_sdk.Configuration(
        host=server.api, username=server.key.access_key_id, password="not-the-secret"
    )
    with pytest.raises(ApiException) as caught:
        LakeFSClient(configuration).repositories_api.list_repositories()
    assert caught.value.status == 401
