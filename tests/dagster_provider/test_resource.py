"""GravelerResource: where its state goes when not configured (SQLite under DAGSTER_HOME, or
Dagster's own PostgreSQL database), and clear errors when there is no durable place."""

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import sqlalchemy as sa
from dagster._core.instance.ref import InstanceRef
from graveler_dagster import GravelerResource, graveler_definitions
from graveler_dagster.storage import default_database_url, postgres_url_of_ref

from graveler.client import Graveler
from graveler.core.errors import InvalidArgument, NamespaceInUse, RepositoryNotFound
from tests.conftest import PG_URL


@dg.asset
def numbers() -> list[int]:
    return [1, 2, 3]


def test_defaults_live_under_dagster_home(instance: dg.DagsterInstance) -> None:
    resource = GravelerResource(repository="lake")
    result = dg.materialize(
        [numbers], instance=instance, resources=graveler_definitions(resource)["resources"]
    )
    home = Path(instance.root_directory) / "graveler"
    assert (home / "graveler.db").is_file()
    with Graveler(home=home) as gv:
        repo = gv.repository("lake")
        branch = resource.run_branch_name(result.run_id)
        assert [e.path for e in repo.iter_objects(branch)] == ["numbers"]
        assert repo.info.storage_namespace == (home / "data" / "lake").as_uri()


def test_ephemeral_instance_without_dagster_home_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    ephemeral = dg.DagsterInstance.ephemeral()
    with pytest.raises(InvalidArgument, match="database_url"):
        default_database_url(ephemeral)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    assert default_database_url(ephemeral) == f"sqlite:///{tmp_path / 'graveler' / 'graveler.db'}"


def test_missing_repository_is_not_created_when_disabled(tmp_path: Path, sqlite_url: str) -> None:
    resource = GravelerResource(
        repository="lake", database_url=sqlite_url, home=str(tmp_path), create_repository=False
    )
    with pytest.raises(RepositoryNotFound):
        resource.get_repository()
    resource.close()


def test_a_repository_created_meanwhile_by_another_step_is_used(
    tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps of a multiprocess run may all find the repository missing. Here another step
    creates it and commits between this step's look at the repository list and its look at
    the namespace (the race a three-process test run hit as NamespaceInUse): this step uses
    that repository. A namespace taken by another repository still fails."""
    namespace = (tmp_path / "ns").as_uri()
    resource = GravelerResource(
        repository="lake", database_url=sqlite_url, home=str(tmp_path), storage_namespace=namespace
    )
    client = resource.get_client()
    real = client.metadata.list_repositories
    calls = iter(range(10**6))

    def listed_before_the_other_step() -> Any:
        if next(calls) == 0:
            with Graveler(home=tmp_path, database_url=sqlite_url) as other:  # the other step
                repo = other.create_repository("lake", namespace)
                repo.put("main", "a", b"x")
                repo.commit("main", "its first output")
            return []
        return real()

    monkeypatch.setattr(client.metadata, "list_repositories", listed_before_the_other_step)
    repo = resource.get_repository()
    assert repo.name == "lake" and repo.info.storage_namespace == namespace
    elsewhere = GravelerResource(
        repository="x-y", database_url=sqlite_url, home=str(tmp_path), storage_namespace=namespace
    )
    with pytest.raises(NamespaceInUse):
        elsewhere.get_repository()
    elsewhere.close()
    resource.close()


@pytest.fixture
def pg_schema() -> Iterator[str]:
    if not PG_URL:
        pytest.skip("GRAVELER_TEST_POSTGRES_URL is not set (make test sets it)")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(PG_URL)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield schema
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def _storage_yaml(style: str, schema: str) -> str:
    url = sa.make_url(PG_URL or "")
    if style == "postgres_db":
        return f"""
storage:
  postgres:
    postgres_db:
      username: {url.username}
      password:
        env: GRAVELER_TEST_DAGSTER_PG_PASSWORD
      hostname: {url.host}
      port: {url.port or 5432}
      db_name: {url.database}
      params:
        options: -csearch_path={schema}
"""
    plain = url.set(drivername="postgresql").render_as_string(hide_password=False)
    return f"""
run_storage:
  module: dagster_postgres.run_storage
  class: PostgresRunStorage
  config:
    postgres_url: {plain}?options=-csearch_path%3D{schema}
"""


@pytest.mark.postgres
@pytest.mark.parametrize("style", ["postgres_db", "legacy_run_storage_url"])
def test_postgres_storage_of_dagster_is_shared(
    style: str, pg_schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dagster's own parser reads a dagster.yaml with PostgreSQL storage; graveler derives its
    URL from that and keeps its tables in the same database."""
    monkeypatch.setenv(
        "GRAVELER_TEST_DAGSTER_PG_PASSWORD", sa.make_url(PG_URL or "").password or ""
    )
    (tmp_path / "dagster.yaml").write_text(_storage_yaml(style, pg_schema))
    url = postgres_url_of_ref(InstanceRef.from_dir(str(tmp_path)))
    assert url is not None and url.startswith("postgresql+psycopg://")
    with Graveler(home=tmp_path / "gv", database_url=url) as gv:
        gv.create_repository("lake")
    with sa.create_engine(PG_URL or "").connect() as conn:
        tables = (
            conn.execute(
                sa.text("SELECT table_name FROM information_schema.tables WHERE table_schema = :s"),
                {"s": pg_schema},
            )
            .scalars()
            .all()
        )
    assert {"graveler_repositories", "graveler_branches", "graveler_commits"} <= set(tables)


def test_sqlite_dagster_storage_is_not_mistaken_for_postgres(instance: Any) -> None:
    assert postgres_url_of_ref(instance.get_ref()) is None
