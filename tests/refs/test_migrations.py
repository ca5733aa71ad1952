"""Migrations: idempotent, concurrent-safe, own version table, and in step with schema.py."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect

import graveler.storage.refs
from graveler.core.errors import InvalidArgument, StorageError
from graveler.storage.refs.migrate import current_revision, head_revision, upgrade
from graveler.storage.refs.schema import VERSION_TABLE, metadata
from graveler.storage.refs.sql import SqlMetadataStore

TABLES = {
    "graveler_repositories",
    "graveler_branches",
    "graveler_tags",
    "graveler_commits",
    "graveler_staged_entries",
    "graveler_hook_runs",
    "graveler_credentials",
    "graveler_multipart_uploads",
    "graveler_multipart_parts",
    VERSION_TABLE,
}


def test_upgrade_twice_is_a_no_op(db_url: str) -> None:
    assert current_revision(db_url) is None
    upgrade(db_url)
    upgrade(db_url)
    assert current_revision(db_url) == head_revision() == "0004"
    engine = create_engine(db_url)
    try:
        names = set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert names == TABLES  # in particular no plain "alembic_version"


def test_store_migrates_on_open_and_reopens(db_url: str) -> None:
    with SqlMetadataStore(db_url) as store:
        assert store.list_repositories() == []
    with SqlMetadataStore(db_url) as store:
        assert store.list_repositories() == []


def test_migrations_match_schema_module(db_url: str) -> None:
    upgrade(db_url)
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"version_table": VERSION_TABLE, "compare_type": True}
            )
            assert compare_metadata(context, metadata) == []
    finally:
        engine.dispose()


def test_concurrent_upgrades_on_an_empty_database(db_url: str) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def run() -> None:
        try:
            barrier.wait()
            upgrade(db_url)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert current_revision(db_url) == head_revision()


def test_unmigrated_database_gives_a_clear_storage_error(db_url: str) -> None:
    with (
        SqlMetadataStore(db_url, migrate=False) as store,
        pytest.raises(StorageError, match="migrations"),
    ):
        store.list_repositories()


def test_migration_scripts_ship_inside_the_package() -> None:
    scripts = Path(graveler.storage.refs.__file__).parent / "migrations"
    assert (scripts / "env.py").is_file()
    assert (scripts / "versions" / "0001_initial.py").is_file()


def test_bad_urls() -> None:
    with pytest.raises(InvalidArgument, match="unsupported"):
        SqlMetadataStore("mysql://u:p@localhost/db")
    with pytest.raises(InvalidArgument):
        SqlMetadataStore("not a url")


def test_unreachable_postgres_is_a_storage_error() -> None:
    url = "postgresql+psycopg://nobody:x@127.0.0.1:1/none?connect_timeout=2"
    with pytest.raises(StorageError, match="connection"):
        SqlMetadataStore(url)


def test_sqlite_parent_directory_is_created(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / '.graveler' / 'refs.db'}"
    with SqlMetadataStore(url) as store:
        assert store.list_repositories() == []
    assert (tmp_path / ".graveler" / "refs.db").is_file()


def test_head_revision_constant_matches_the_scripts() -> None:
    from graveler.storage.refs.migrate import HEAD_REVISION

    assert head_revision() == HEAD_REVISION


def test_opening_a_current_database_does_not_import_alembic(tmp_path) -> None:
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'refs.db'}"
    upgrade(url)
    code = (
        "import sys; from graveler.storage.refs.sql import SqlMetadataStore; "
        f"SqlMetadataStore({url!r}).close(); print('alembic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- the embedded store (standard library): migrated through Alembic, then used without it ----


def test_stdlib_store_creates_or_migrates_through_alembic_then_works(tmp_path: Path) -> None:
    from graveler.storage.refs.revision import HEAD_REVISION
    from graveler.storage.refs.sqlite_store import SqliteMetadataStore, schema_revision

    fresh = tmp_path / ".graveler" / "refs.db"  # neither the file nor its directory exist
    with SqliteMetadataStore(f"sqlite:///{fresh}") as store:
        assert store.list_repositories() == []
    assert schema_revision(str(fresh)) == HEAD_REVISION
    old = tmp_path / "old.db"
    upgrade(f"sqlite:///{old}", "0001")  # a database of an older build
    assert schema_revision(str(old)) == "0001"
    with SqliteMetadataStore(old) as store:
        assert store.list_hook_runs("any") == []  # a table of a later revision
    assert schema_revision(str(old)) == HEAD_REVISION


def test_stdlib_store_refuses_a_newer_schema_and_an_unmigrated_one(tmp_path: Path) -> None:
    import sqlite3

    from graveler.storage.refs.sqlite_store import SqliteMetadataStore

    newer = tmp_path / "newer.db"
    upgrade(f"sqlite:///{newer}")
    with sqlite3.connect(newer) as conn:
        conn.execute(f"UPDATE {VERSION_TABLE} SET version_num = '9999'")
    with pytest.raises(StorageError):
        SqliteMetadataStore(newer)
    bare = tmp_path / "bare.db"
    with (
        SqliteMetadataStore(bare, migrate=False) as store,
        pytest.raises(StorageError, match="migrations"),
    ):
        store.list_repositories()
    with pytest.raises(InvalidArgument, match="SQLite file"):
        SqliteMetadataStore("postgresql+psycopg://u:p@127.0.0.1/db")


def test_the_stdlib_store_on_a_current_database_imports_no_sqlalchemy(tmp_path: Path) -> None:
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'refs.db'}"
    upgrade(url)
    code = (
        "import sys; from graveler.storage.refs.store import open_metadata_store; "
        f"s = open_metadata_store({url!r}); s.list_repositories(); s.close(); "
        "print(sorted(m for m in ('sqlalchemy', 'alembic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
