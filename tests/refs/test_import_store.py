"""The store of background imports (``graveler_imports``) on SQLite and PostgreSQL: every
change of state is conditional, so a runner, a cancel and a settling status read never
overwrite each other."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from graveler.core.errors import AlreadyExists, NotFound
from graveler.core.model import ImportJob, ImportState
from graveler.storage.refs.sql import SqlMetadataStore
from graveler.storage.refs.sql_imports import SqlImportStore
from tests.refs.conftest import new_repository

T0 = datetime(2026, 12, 1, 12, 0, 0, 123456, tzinfo=UTC)


@pytest.fixture
def stores(db_url: str) -> Iterator[tuple[SqlMetadataStore, SqlImportStore]]:
    refs = SqlMetadataStore(db_url)
    jobs = SqlImportStore(db_url)
    new_repository(refs)
    yield refs, jobs
    jobs.close()
    refs.close()


def a_job(import_id: str = "abc123", **changes: object) -> ImportJob:
    fields: dict[str, object] = {
        "id": import_id,
        "repo": "repo",
        "branch": "main",
        "sources": (("common_prefix", "s3://b/raw/", "raw/"), ("object", "s3://b/x", "x")),
        "state": ImportState.RUNNING,
        "ingested": 0,
        "created": T0,
        "updated": T0,
        "heartbeat": T0,
    }
    fields.update(changes)
    return ImportJob(**fields)  # type: ignore[arg-type]


def test_round_trip_and_missing(stores: tuple[SqlMetadataStore, SqlImportStore]) -> None:
    _, jobs = stores
    jobs.create(a_job())
    assert jobs.get("abc123") == a_job()
    with pytest.raises(AlreadyExists):
        jobs.create(a_job())
    with pytest.raises(NotFound):
        jobs.get("nope")


def test_beats_move_an_active_import_only(stores: tuple[SqlMetadataStore, SqlImportStore]) -> None:
    _, jobs = stores
    jobs.create(a_job())
    t1 = T0 + timedelta(seconds=1)
    beaten = jobs.beat("abc123", 42, t1)
    assert (beaten.ingested, beaten.heartbeat, beaten.updated) == (42, t1, t1)
    assert jobs.finish("abc123", ImportState.FAILED, t1, error="boom", ingested=43)
    after = jobs.beat("abc123", 99, t1 + timedelta(seconds=5))
    assert (after.state, after.ingested, after.error, after.updated) == ("failed", 43, "boom", t1)


def test_cancel_applies_to_a_running_import(
    stores: tuple[SqlMetadataStore, SqlImportStore],
) -> None:
    _, jobs = stores
    jobs.create(a_job("one"))
    canceled = jobs.cancel("one", T0, "Canceled")
    assert canceled.state is ImportState.CANCELED and canceled.error == "Canceled"
    assert not jobs.claim_commit("one", "c1", T0)  # a canceled import may not commit
    assert not jobs.finish("one", ImportState.COMPLETED, T0, commit_id="c1")
    jobs.create(a_job("two"))
    assert jobs.claim_commit("two", "c2", T0)
    assert jobs.cancel("two", T0, "Canceled").state is ImportState.COMMITTING
    assert jobs.finish("two", ImportState.COMPLETED, T0, commit_id="c2", metarange_id="m2")
    done = jobs.get("two")
    assert (done.state, done.commit_id, done.metarange_id) == ("completed", "c2", "m2")
    assert jobs.cancel("two", T0, "Canceled").state is ImportState.COMPLETED


def test_settling_a_stale_import_needs_an_old_heartbeat(
    stores: tuple[SqlMetadataStore, SqlImportStore],
) -> None:
    _, jobs = stores
    jobs.create(a_job())
    assert not jobs.finish("abc123", ImportState.FAILED, T0, stale_before=T0, error="x")
    jobs.beat("abc123", 1, T0 + timedelta(seconds=10))  # the runner is alive after all
    late = T0 + timedelta(seconds=5)
    assert not jobs.finish("abc123", ImportState.FAILED, late, stale_before=late, error="x")
    later = T0 + timedelta(seconds=20)
    assert jobs.finish("abc123", ImportState.FAILED, later, stale_before=later, error="gone")
    assert jobs.get("abc123").error == "gone"


def test_deleting_the_repository_deletes_its_imports(
    stores: tuple[SqlMetadataStore, SqlImportStore],
) -> None:
    refs, jobs = stores
    jobs.create(a_job())
    refs.delete_repository("repo")
    with pytest.raises(NotFound):
        jobs.get("abc123")
