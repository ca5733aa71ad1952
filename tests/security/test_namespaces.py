"""One repository, one namespace.

Reproduced before the fix: ``create_repository`` compared namespace strings, so other
spellings of one directory, a namespace inside another repository's or one containing it, and
any namespace of a repository in another refs database were accepted; garbage collection of
either repository then deleted the other's objects.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graveler.client import Graveler
from graveler.core.errors import AlreadyExists
from graveler.core.model import Branch, RangeSettings
from graveler.core.model import Repository as RepositoryInfo
from graveler.maintenance.gc import RetentionRules, collect_garbage
from graveler.repository import Repository
from graveler.views.layers import new_staging_token

MARKER = "_graveler/repository.json"
NO_GRACE = timedelta(0)
LATER = datetime.now(UTC) + timedelta(days=1)  # every object is older than this

SPELLINGS: dict[str, Callable[[Path], str]] = {
    "double slash": lambda t: f"file://{t}/x//shared",
    "dot": lambda t: f"file://{t}/x/./shared",
    "localhost": lambda t: f"file://localhost{t}/x/shared",
    "dot-dot": lambda t: f"file://{t}/x/y/../shared",
    "trailing slash, plain path": lambda t: f"{t}/x/shared/",
    "symbolic link": lambda t: f"file://{t}/link/shared",
}


def insert_the_old_way(client: Graveler, name: str, namespace: str) -> RepositoryInfo:
    """A repository row as versions without namespace checks wrote it: no check, no marker."""
    from graveler.client import INITIAL_COMMIT_MESSAGE
    from graveler.core.model import EMPTY_METARANGE_ID
    from graveler.storage.committed.splitter import DEFAULT_RANGE_SETTINGS
    from graveler.views.history import make_commit

    created = datetime.now(UTC)
    settings: RangeSettings = DEFAULT_RANGE_SETTINGS
    info = RepositoryInfo(name, namespace, "main", created, settings)
    initial = make_commit([], EMPTY_METARANGE_ID, INITIAL_COMMIT_MESSAGE, "t", {}, created)
    client.metadata.create_repository(
        info, initial, Branch("main", initial.id, new_staging_token(name, "main"))
    )
    return info


def opened_the_old_way(client: Graveler, info: RepositoryInfo) -> Repository:
    """A handle as versions without the open check made it (no marker read or written)."""
    from graveler.storage.committed.manager import CommittedManager
    from graveler.views.context import RepositoryParts

    store = client.object_store(info.storage_namespace)
    committed = CommittedManager(store, client.cache, info.range_settings)
    parts = RepositoryParts(
        client.metadata, client.metadata, store, committed, client.commit_cache, client.settings
    )
    return Repository(info, parts)


def with_data(repo: Repository, n: int = 3) -> list[str]:
    """Commit ``n`` objects; their physical addresses."""
    entries = [repo.put("main", f"f{i}", f"value {i}".encode()) for i in range(n)]
    repo.commit("main", "data")
    return [e.physical_address for e in entries]


@pytest.mark.parametrize("spelling", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_every_spelling_of_a_directory_is_the_same_namespace(
    clients: dict[str, Graveler], tmp_path: Path, spelling: Callable[[Path], str]
) -> None:
    gv = clients["one"]
    (tmp_path / "x").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "x")
    gv.create_repository("alpha", (tmp_path / "x" / "shared").as_uri())
    with pytest.raises(AlreadyExists, match="'alpha'"):
        gv.create_repository("beta", spelling(tmp_path))
    assert [r.name for r in gv.list_repositories()] == ["alpha"]


def test_s3_keys_are_normalised(moto_endpoint: str, s3_bucket: str, tmp_path: Path) -> None:
    with Graveler(tmp_path / "home", store_options={"endpoint_url": moto_endpoint}) as gv:
        first = gv.create_repository("alpha", f"s3://{s3_bucket}//lakes//shared/")
        assert first.info.storage_namespace == f"s3://{s3_bucket}/lakes/shared"
        with pytest.raises(AlreadyExists, match="'alpha'"):
            gv.create_repository("beta", f"s3://{s3_bucket}/lakes/shared")
        with pytest.raises(AlreadyExists, match="'alpha'"):
            gv.create_repository("gamma", f"s3://{s3_bucket}/lakes")  # contains it


@pytest.mark.parametrize("database", ["same refs database", "another refs database"])
@pytest.mark.parametrize("where", ["same", "nested", "containing"])
def test_overlapping_namespaces_are_refused(
    clients: dict[str, Graveler], tmp_path: Path, database: str, where: str
) -> None:
    ns = tmp_path / "lakes" / "alpha"
    alpha = clients["one"].create_repository("alpha", ns.as_uri())
    with_data(alpha)
    other = clients["one"] if database == "same refs database" else clients["two"]
    target = {"same": ns, "nested": ns / "data" / "bb", "containing": tmp_path / "lakes"}[where]
    with pytest.raises(AlreadyExists, match="'alpha'"):
        other.create_repository("beta", target.as_uri())
    assert "beta" not in {r.name for r in other.list_repositories()}


def test_the_marker_names_the_repository_and_is_written_on_first_use(
    clients: dict[str, Graveler], tmp_path: Path
) -> None:
    gv = clients["one"]
    fresh = gv.create_repository("fresh", (tmp_path / "fresh").as_uri())
    assert json.loads(fresh.store.get(MARKER))["repository"] == "fresh"
    legacy = insert_the_old_way(gv, "legacy", (tmp_path / "legacy").as_uri())
    store = gv.object_store(legacy.storage_namespace)
    assert not store.exists(MARKER)
    repo = gv.repository("legacy")  # first use
    doc = json.loads(store.get(MARKER))
    assert doc["repository"] == "legacy" and repo.name == "legacy"
    assert doc["database"].startswith("sqlite:///")


def test_gc_of_a_second_repository_cannot_delete_the_first_ones_data(
    clients: dict[str, Graveler], tmp_path: Path
) -> None:
    """The reported data loss: two deployments on one namespace, then GC of one of them."""
    ns = (tmp_path / "shared").as_uri()
    alpha = clients["one"].create_repository("alpha", ns)
    with_data(alpha)
    beta_info = insert_the_old_way(clients["two"], "beta", ns)  # made before the checks
    with pytest.raises(AlreadyExists, match="'alpha'"):
        clients["two"].repository("beta")
    beta = opened_the_old_way(clients["two"], beta_info)
    with pytest.raises(AlreadyExists, match="'alpha'"):
        collect_garbage(beta, RetentionRules(0), grace=NO_GRACE, now=LATER)
    for i in range(3):
        assert alpha.get("main", f"f{i}") == f"value {i}".encode()


def test_gc_refuses_to_collect_a_namespace_nested_inside_its_data(
    clients: dict[str, Graveler], tmp_path: Path
) -> None:
    ns = tmp_path / "alpha"
    alpha = clients["one"].create_repository("alpha", ns.as_uri())
    with_data(alpha)
    nested = insert_the_old_way(clients["two"], "beta", (ns / "data" / "bb").as_uri())
    beta = opened_the_old_way(clients["two"], nested)
    with_data(beta)
    with pytest.raises(AlreadyExists, match="data/bb"):
        collect_garbage(alpha, RetentionRules(0), grace=NO_GRACE, now=LATER)
    for i in range(3):
        assert beta.get("main", f"f{i}") == f"value {i}".encode()


def test_gc_and_fsck_refuse_a_namespace_whose_marker_names_another_repository(
    clients: dict[str, Graveler], tmp_path: Path
) -> None:
    from graveler.maintenance.fsck import fsck

    repo = clients["one"].create_repository("alpha", (tmp_path / "ns").as_uri())
    with_data(repo)
    repo.store.put("data/zz/unreferenced", b"garbage a GC run would delete")
    doc: dict[str, Any] = {"format": 1, "repository": "someone-else", "created": "2020-01-01"}
    repo.store.put(MARKER, json.dumps(doc).encode())
    with pytest.raises(AlreadyExists, match="someone-else"):
        collect_garbage(repo, RetentionRules(0), grace=NO_GRACE, now=LATER)
    with pytest.raises(AlreadyExists, match="someone-else"):
        fsck(repo)
    assert repo.store.exists("data/zz/unreferenced")


def test_a_deleted_repositorys_namespace_stays_claimed(
    clients: dict[str, Graveler], tmp_path: Path
) -> None:
    """Deleting a repository keeps its objects (and refs dumps), so the namespace stays
    claimed: a new repository there would garbage-collect them. Restoring the deleted one
    from a dump still works (tests/fsck/test_refs_backup.py)."""
    ns = tmp_path / "ns"
    alpha = clients["one"].create_repository("alpha", ns.as_uri())
    with_data(alpha)
    clients["one"].delete_repository("alpha")
    with pytest.raises(AlreadyExists, match="'alpha'"):
        clients["one"].create_repository("beta", ns.as_uri())
    assert clients["one"].list_repositories() == []
    assert json.loads(alpha.store.get(MARKER))["repository"] == "alpha"


def test_a_repository_created_meanwhile_by_another_process_is_already_exists(
    clients: dict[str, Graveler], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes create the same repository at once. If the other one's row, marker and
    files all land between this one's look at the repository list and its look at the
    namespace, the refusal is AlreadyExists (the repository is there to open), not
    NamespaceInUse (which says the location belongs to another repository)."""
    one = clients["one"]
    two = Graveler(tmp_path / "second-process", database_url=one.database_url)  # same refs
    ns = (tmp_path / "lake").as_uri()
    real = two.metadata.list_repositories
    calls = iter(range(10**6))

    def listed_before_the_other() -> Any:
        if next(calls) == 0:
            with_data(one.create_repository("lake", ns))
            return []
        return real()

    monkeypatch.setattr(two.metadata, "list_repositories", listed_before_the_other)
    with pytest.raises(AlreadyExists, match="repository 'lake' already exists") as refused:
        two.create_repository("lake", ns)
    assert type(refused.value) is AlreadyExists
    assert two.repository("lake").info.storage_namespace == ns
    two.close()
