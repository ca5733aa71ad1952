"""lakeFS's high-level Python SDK (the ``lakefs`` package) against ``graveler serve``:
repositories, branches, objects (upload, writers, readers), commits, diff, merge, tags,
transactions and import. Every answer also passes the contract tap (conftest.py)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import lakefs
import pytest
from lakefs.exceptions import ConflictException, NotFoundException

from tests.lakefs_clients.server import LakeFS, unique


@pytest.fixture(scope="module")
def client(server: LakeFS) -> lakefs.Client:
    return lakefs.Client(
        host=server.url,
        username=server.key.access_key_id,
        password=server.key.secret_access_key,
    )


@pytest.fixture
def repo(client: lakefs.Client) -> lakefs.Repository:
    name = unique("hl")
    return lakefs.Repository(name, client=client).create(storage_namespace=f"local://{name}")


def test_client_and_repositories(client: lakefs.Client, repo: lakefs.Repository) -> None:
    assert tuple(int(p) for p in client.version.split(".")) >= (1, 0, 0)
    assert client.storage_config.blockstore_type == "local"
    props = repo.properties
    assert props.id == repo.id and props.default_branch == "main"
    assert props.storage_namespace == f"local://{repo.id}"
    assert [r.id for r in lakefs.repositories(client=client, prefix=repo.id)] == [repo.id]
    again = lakefs.Repository(repo.id, client=client).create(
        storage_namespace=f"local://{repo.id}", exist_ok=True
    )
    assert again.properties.id == repo.id
    with pytest.raises(ConflictException):
        lakefs.Repository(repo.id, client=client).create(storage_namespace=f"local://{repo.id}")


def test_objects_commits_and_diff(repo: lakefs.Repository) -> None:
    dev = repo.branch("dev").create(source_reference="main")
    assert [b.id for b in repo.branches()] == ["dev", "main"]
    obj = dev.object("tables/t.csv").upload(
        data="a,b\n1,2\n", content_type="text/csv", metadata={"owner": "hl"}
    )
    stat = obj.stat()
    assert stat.size_bytes == 8 and stat.content_type == "text/csv"
    assert stat.metadata == {"owner": "hl"}
    with dev.object("tables/big.bin").writer(mode="wb") as out:
        for i in range(64):
            out.write(bytes([i]) * 1024)
    with dev.object("tables/big.bin").reader(mode="rb") as f:
        f.seek(1024 * 10)
        assert f.read(4) == bytes([10]) * 4
    assert dev.object("tables/t.csv").reader(mode="r").read() == "a,b\n1,2\n"
    assert dev.object("tables/t.csv").exists() and not dev.object("tables/none").exists()

    assert sorted(c.path for c in dev.uncommitted()) == ["tables/big.bin", "tables/t.csv"]
    ref = dev.commit(message="tables", metadata={"k": "v"})
    commit = ref.get_commit()
    assert commit.message == "tables" and commit.metadata == {"k": "v"}
    assert list(dev.uncommitted()) == []
    changes = [(c.type, c.path) for c in repo.branch("main").diff(other_ref=dev)]
    assert changes == [("added", "tables/big.bin"), ("added", "tables/t.csv")]
    listed = [o.path for o in dev.objects(prefix="tables/")]
    assert listed == ["tables/big.bin", "tables/t.csv"]
    assert next(dev.log(max_amount=2)).message == "tables"

    dev.object("tables/t.csv").delete()
    dev.reset_changes(path_type="object", path="tables/t.csv")
    assert dev.object("tables/t.csv").exists()


def test_merge_tags_and_revert(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    main.object("v.txt").upload(data=b"1")
    first = main.commit(message="v1").get_commit()
    feature = repo.branch("feature").create(source_reference=main)
    feature.object("v.txt").upload(data=b"2")
    feature.commit(message="v2")
    merged = feature.merge_into(main, message="merge feature")
    assert main.get_commit().id == merged
    assert main.object("v.txt").reader().read() == b"2"

    tag = repo.tag("release-1").create(first.id)
    assert tag.get_commit().id == first.id
    assert [t.id for t in repo.tags()] == ["release-1"]
    assert repo.ref("release-1").object("v.txt").reader().read() == b"1"
    with pytest.raises(ConflictException):
        repo.tag("release-1").create(main)
    tag.delete()
    with pytest.raises(NotFoundException):
        repo.tag("release-1").get_commit()

    main.revert(merged, parent_number=1)
    assert main.object("v.txt").reader().read() == b"1"
    feature.delete()
    assert [b.id for b in repo.branches()] == ["main"]


def test_transaction_commits_and_merges(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    with main.transact(commit_message="in a transaction") as tx:
        tx.object("tx/a.txt").upload(data=b"a")
        tx.object("tx/b.txt").upload(data=b"b")
    assert main.object("tx/a.txt").reader().read() == b"a"
    messages = [c.message for c in main.log(max_amount=3)]
    assert "in a transaction" in messages
    assert [b.id for b in repo.branches()] == ["main"]


def test_import_data(repo: lakefs.Repository, tmp_path: Path) -> None:
    source = tmp_path / unique("hl-import")
    (source / "sub").mkdir(parents=True)
    (source / "one.txt").write_bytes(b"1")
    (source / "sub" / "two.txt").write_bytes(b"22")
    branch = repo.branch("main")
    status = (
        branch.import_data(commit_message="imported")
        .prefix(f"local://{source}/", destination="in/")
        .run(poll_interval=timedelta(seconds=0.1))
    )
    assert status.completed and status.error is None and status.ingested_objects == 2
    assert [o.path for o in branch.objects(prefix="in/")] == ["in/one.txt", "in/sub/two.txt"]
    assert branch.object("in/sub/two.txt").reader().read() == b"22"
    assert branch.get_commit().message == "imported"


def test_lakectl_configuration_is_enough(
    server: LakeFS, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``.lakectl.yaml`` as lakectl reads it (docs/lakefs-clients.md): the ``lakefs``
    package and lakefs-spec take it when given no arguments."""
    from lakefs_spec import LakeFSFileSystem

    config = tmp_path / "lakectl.yaml"
    config.write_text(
        "credentials:\n"
        f"  access_key_id: {server.key.access_key_id}\n"
        f"  secret_access_key: {server.key.secret_access_key}\n"
        "server:\n"
        f"  endpoint_url: {server.url}\n"
    )
    monkeypatch.setenv("LAKECTL_CONFIG_FILE", str(config))
    name = unique("lakectl")
    lakefs.Repository(name).create(storage_namespace=f"local://{name}")
    assert [r.id for r in lakefs.repositories(prefix=name)] == [name]
    fs = LakeFSFileSystem(skip_instance_cache=True)
    fs.pipe(f"lakefs://{name}/main/hello.txt", b"hello")
    assert lakefs.Repository(name).branch("main").object("hello.txt").reader().read() == b"hello"
