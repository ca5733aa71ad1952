"""Fixtures of the refs/staging conformance suite: every test taking ``store`` (or
``open_store`` with ``store_url``) runs on each store: SQLAlchemy on SQLite (a fresh file), the
embedded store on SQLite through the standard library (``sqlite-stdlib``), and SQLAlchemy on
PostgreSQL (a fresh schema on the server named by ``GRAVELER_TEST_POSTGRES_URL``; skipped
when unset, failed when set but unreachable). Tests of the database itself (migrations)
take ``db_url``: SQLite and PostgreSQL.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine
from sqlalchemy.exc import SQLAlchemyError

from graveler.core.model import Branch, Commit, RangeSettings, Repository
from graveler.storage.refs.scratch import scratch_schema
from graveler.storage.refs.sql import SqlMetadataStore
from graveler.storage.refs.sqlite_store import SqliteMetadataStore
from graveler.storage.refs.store import MetadataStore

PG_ENV = "GRAVELER_TEST_POSTGRES_URL"

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
]
#: The stores of the conformance suite: (database, implementation).
STORES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("sqlite-stdlib", id="sqlite-stdlib"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
]
#: Opens a store: ``(url, **options)`` with the options of both store classes.
OpenStore = Callable[..., MetadataStore]


def opener(kind: str) -> OpenStore:
    """The store class of ``kind`` (a STORES id)."""
    return SqliteMetadataStore if kind == "sqlite-stdlib" else SqlMetadataStore


@pytest.fixture(scope="session")
def pg_admin() -> Iterator[Engine]:
    """An engine on the test PostgreSQL database (creates and drops per-test schemas)."""
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"{PG_ENV} is not set; PostgreSQL conformance runs under `make test`")
    engine = create_engine(url, pool_size=2)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    except SQLAlchemyError as exc:
        engine.dispose()
        pytest.fail(f"{PG_ENV}={url} is set but the server is unreachable: {exc}")
    yield engine
    engine.dispose()


@pytest.fixture
def sqlite_db_url(tmp_path: Path) -> str:
    """The URL of a new, empty SQLite database file."""
    return f"sqlite:///{tmp_path / 'refs.db'}"


@pytest.fixture
def pg_db_url(pg_admin: Engine) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL schema that is the only entry of the connection's
    ``search_path`` (works for spawned processes too); dropped with its contents afterwards."""
    with scratch_schema(pg_admin.url.render_as_string(hide_password=False)) as url:
        yield url


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest) -> str:
    """An empty database on each backend in turn."""
    fixture = "sqlite_db_url" if request.param == "sqlite" else "pg_db_url"
    url: str = request.getfixturevalue(fixture)
    return url


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    """Each store of the conformance suite in turn."""
    return str(request.param)


@pytest.fixture
def store_url(store_kind: str, request: pytest.FixtureRequest) -> str:
    """An empty database for ``store_kind``."""
    fixture = "pg_db_url" if store_kind == "postgresql" else "sqlite_db_url"
    url: str = request.getfixturevalue(fixture)
    return url


@pytest.fixture
def open_store(store_kind: str) -> OpenStore:
    """``open_store(url, **options)``: a store of ``store_kind``."""
    return opener(store_kind)


@pytest.fixture
def store(store_url: str, open_store: OpenStore) -> Iterator[MetadataStore]:
    """A migrated store on an empty database."""
    with open_store(store_url) as opened:
        yield opened


# --- model builders ---------------------------------------------------------------------------

#: Microseconds and a non-UTC offset on purpose: both must survive a round trip.
T0 = datetime(2026, 11, 22, 10, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))


def a_repository(name: str = "repo", default_branch: str = "main") -> Repository:
    return Repository(
        name=name,
        storage_namespace=f"mem://{name}",
        default_branch=default_branch,
        creation_date=T0,
        range_settings=RangeSettings(min_size=1 << 20, max_size=20 << 20, raggedness=50_000),
    )


def a_commit(commit_id: str = "c0", parents: tuple[str, ...] = (), **kw: object) -> Commit:
    fields: dict[str, object] = {
        "metarange_id": "",
        "message": "initial commit",
        "committer": "tester",
        "creation_date": datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
        "metadata": {},
        "generation": len(parents) + 1,
    }
    fields.update(kw)
    return Commit(id=commit_id, parents=parents, **fields)  # type: ignore[arg-type]


def a_branch(name: str = "main", commit_id: str = "c0", token: str | None = None) -> Branch:
    return Branch(name=name, commit_id=commit_id, staging_token=token or f"tok-{uuid.uuid4()}")


def new_repository(store: MetadataStore, name: str = "repo") -> Branch:
    """Create repository ``name`` with commit ``c0`` and branch ``main``; return the branch."""
    branch = a_branch()
    store.create_repository(a_repository(name), a_commit(), branch)
    return branch
