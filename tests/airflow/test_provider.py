"""The provider's registration, connection settings, asset scheme and DAG wiring.

These run in the pytest process (importing ``airflow.sdk`` only); what Airflow itself
discovers is checked in the real deployment (its components' environment, its database).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import urlsplit

import jsonschema
import pytest
from graveler_airflow.get_provider_info import get_provider_info
from graveler_airflow.hooks.graveler import GravelerHook, settings_from_connection

from graveler.core.errors import InvalidArgument, InvalidURI
from graveler.core.validate import branch_name
from graveler.storage.refs.migrate import head_revision
from tests.airflow.deployment import Deployment

AIRFLOW_PACKAGE = Path(__import__("airflow").__file__).parent


def _schema(name: str) -> dict:
    return json.loads((AIRFLOW_PACKAGE / name).read_text())


def test_provider_info_validates_against_airflows_schemas() -> None:
    info = get_provider_info()
    jsonschema.validate(info, _schema("provider_info.schema.json"))
    behaviour = info["connection-types"][0]["ui-field-behaviour"]
    jsonschema.validate(
        {
            "hidden_fields": behaviour["hidden-fields"],
            "relabeling": behaviour["relabeling"],
            "placeholders": behaviour["placeholders"],
        },
        _schema("customized_form_field_behaviours.schema.json"),
    )
    assert info["package-name"] == "graveler"


PROVIDER_VIEW = textwrap.dedent(
    """
    import json
    from airflow.providers_manager import ProvidersManager
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    core, runtime = ProvidersManager(), ProvidersManagerTaskRuntime()
    hook = runtime.hooks.get("graveler")
    print(json.dumps({
        "providers": sorted(core.providers),
        "hook": hook.hook_class_name if hook else None,
        "hook_name": hook.hook_name if hook else None,
        "connection_testable": hook.connection_testable if hook else None,
        "asset_schemes": sorted(runtime.asset_uri_handlers),
        "asset_factories": sorted(runtime.asset_factories),
        "filesystems": sorted(runtime.filesystem_module_names),
        "db_managers": list(core.db_managers),
        "widgets": sorted(k for k in core.connection_form_widgets if "__graveler__" in k),
        "behaviour": core.field_behaviours.get("graveler"),
        "triggers": sorted(
            m for t in core.trigger if t.package_name == "graveler" for m in [t.trigger_class_name]
        ),
    }))
    """
)


def test_airflow_discovers_the_provider_through_its_entry_point(deployment: Deployment) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROVIDER_VIEW],
        env=deployment.env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    view = json.loads(done.stdout.strip().splitlines()[-1])
    assert "graveler" in view["providers"]
    assert view["hook"] == "graveler_airflow.hooks.graveler.GravelerHook"
    assert view["hook_name"] == "Graveler" and view["connection_testable"]
    assert "graveler" in view["asset_schemes"] and "graveler" in view["asset_factories"]
    assert view["filesystems"] == ["graveler_airflow.fs.graveler"]
    assert view["db_managers"] == ["graveler_airflow.db_manager.GravelerDBManager"]
    assert "extra__graveler__database_url" in view["widgets"]
    assert view["behaviour"]["relabeling"]["password"] == "Database password"
    assert view["triggers"] == [
        "graveler_airflow.triggers.events",
        "graveler_airflow.triggers.graveler",
    ]
    listed = {p["package_name"] for p in deployment.get("/api/v2/providers")["providers"]}
    assert "graveler" in listed  # what the running api-server shows


def test_airflow_db_migrate_creates_graveler_tables_in_its_postgres_database(
    deployment: Deployment,
) -> None:
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(deployment.database_url)
    try:
        tables = set(inspect(engine).get_table_names())
        with engine.connect() as conn:
            version = conn.execute(text("SELECT version_num FROM graveler_alembic_version")).all()
    finally:
        engine.dispose()
    assert {"graveler_branches", "graveler_commits", "graveler_staged_entries"} <= tables
    assert "dag_run" in tables  # Airflow's own, in the same database
    assert [tuple(v) for v in version] == [(head_revision(),)]


@pytest.mark.postgres
def test_db_manager_upgrades_a_postgres_metadata_db(pg_schema_url: str, tmp_path: Path) -> None:
    from graveler_airflow.db_manager import GravelerDBManager
    from sqlalchemy import create_engine, inspect
    from sqlalchemy.orm import Session

    from graveler.client import Graveler

    engine = create_engine(pg_schema_url)
    try:
        with Session(engine) as session:
            manager = GravelerDBManager(session)
            assert not manager.check_migration()
            manager.initdb()
            manager.upgradedb()  # idempotent
            assert manager.check_migration()
        assert "graveler_branches" in inspect(engine).get_table_names()
    finally:
        engine.dispose()
    with Graveler(home=tmp_path, database_url=pg_schema_url) as gv:
        assert gv.create_repository("lake").resolve("main").commit.parents == ()


def test_connection_settings_defaults_and_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_HOME", "/opt/airflow")
    default = settings_from_connection(None, None, {})
    assert default.home == "/opt/airflow/graveler"
    assert default.database_url == "sqlite:////opt/airflow/graveler/graveler.db"
    assert default.store_options == {}
    full = settings_from_connection(
        "gv",
        "p@ss/word",
        {
            "database_url": "postgresql+psycopg://db.internal:5432/airflow",
            "home": "/cache",
            "s3_endpoint_url": "http://127.0.0.1:9000",
            "s3_region": "eu-west-1",
            "aws_access_key_id": "AKIA",
            "aws_secret_access_key": "secret",
            "cache_ram_bytes": "1024",
            "cache_disk_bytes": "",
        },
    )
    assert full.database_url == "postgresql+psycopg://gv:p%40ss%2Fword@db.internal:5432/airflow"
    assert full.store_options == {
        "endpoint_url": "http://127.0.0.1:9000",
        "region": "eu-west-1",
        "access_key_id": "AKIA",
        "secret_access_key": "secret",
    }
    assert (full.cache_ram_bytes, full.cache_disk_bytes) == (1024, None)
    kept = settings_from_connection("other", "x", {"database_url": "postgresql://u:v@h/d"})
    assert kept.database_url == "postgresql://u:v@h/d"


@pytest.mark.parametrize("extra", [{"database_url": "not a url"}, {"cache_ram_bytes": "lots"}])
def test_connection_settings_refuse_bad_values(extra: dict[str, str]) -> None:
    with pytest.raises(InvalidArgument):
        settings_from_connection(None, None, extra)


def test_hook_test_connection(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    good = {
        "conn_type": "graveler",
        "extra": {"database_url": f"sqlite:///{tmp_path}/r.db", "home": str(tmp_path)},
    }
    monkeypatch.setenv("AIRFLOW_CONN_GV_GOOD", json.dumps(good))
    hook = GravelerHook("gv_good")
    hook.get_conn().create_repository("lake")
    hook.close()
    assert GravelerHook("gv_good").test_connection() == (True, "Connected: 1 repositories (lake)")
    bad = {"conn_type": "graveler", "extra": {"database_url": "mysql://h/d", "home": str(tmp_path)}}
    monkeypatch.setenv("AIRFLOW_CONN_GV_BAD", json.dumps(bad))
    ok, message = GravelerHook("gv_bad").test_connection()
    assert not ok and "unsupported database 'mysql'" in message


def test_asset_uri_handler_and_factory() -> None:
    from airflow.sdk import Asset
    from graveler_airflow.assets.graveler import create_asset, graveler_asset, sanitize_uri

    clean = sanitize_uri(urlsplit("graveler://lake/main//clean/weather"))
    assert clean.geturl() == "graveler://lake/main/clean/weather"
    for bad in ("graveler:///main/x", "graveler://Not_A_Repo/main", "graveler://lake"):
        with pytest.raises(InvalidURI):
            sanitize_uri(urlsplit(bad))
    asset = graveler_asset("lake", "main", "clean/weather/")
    assert asset.name == asset.uri == "graveler://lake/main/clean/weather"
    assert create_asset(repository="lake", ref="main") == graveler_asset("lake", "main")
    # Airflow applies the registered handler when it builds an Asset.
    assert Asset("graveler://lake/main//clean/weather/").uri == "graveler://lake/main/clean/weather"


@pytest.mark.parametrize(
    ("path", "table"),
    [
        ("tables/daily/date=2024-01-01/part-0.parquet", "tables/daily"),
        ("tables/daily/_delta_log/00001.json", "tables/daily"),
        ("tables/daily/.hidden/x", "tables/daily"),
        ("clean/weather/part-0.parquet", "clean/weather"),
        ("raw/events.csv", "raw"),
        ("top.csv", ""),
        ("date=2024-01-01/x.parquet", ""),
    ],
)
def test_table_path(path: str, table: str) -> None:
    from graveler_airflow.assets.graveler import table_path

    assert table_path(path) == table


def test_merge_changes_are_table_level_by_default(tmp_path: Path) -> None:
    """25 runs of a partitioned table change one asset, not one per directory level."""
    from graveler_airflow.assets.graveler import merge_changes

    from graveler.client import Graveler

    with Graveler(home=tmp_path) as gv:
        repo = gv.create_repository("lake")
        base = repo.resolve("main").commit.id
        for day in range(1, 26):
            repo.put("main", f"tables/t/date=2024-01-{day:02}/part-0.parquet", b"p")
        repo.put("main", "raw/w.csv", b"w")
        repo.put("main", "top.csv", b"t")
        head = repo.commit("main", "data").id
        changes = merge_changes(repo, "main", base, head)
        assert [(c.uri, c.extra["changes"]) for c in changes] == [
            ("graveler://lake/main", 1),
            ("graveler://lake/main/raw", 1),
            ("graveler://lake/main/tables/t", 25),
        ]
        assert changes[0].extra["commit_id"] == head
        assert changes[0].extra["previous_commit_id"] == base
        assert len(merge_changes(repo, "main", base, head, limit=2)) == 2
        explicit = merge_changes(repo, "main", base, head, paths=["raw/w.csv", "tables", "none"])
        assert [(c.path, c.extra["changes"]) for c in explicit] == [
            ("tables", 25),
            ("raw/w.csv", 1),
        ]


@pytest.mark.parametrize(
    "run_id",
    [
        "manual__2026-11-22T03:07:50.401529+00:00",
        "scheduled__2024-01-01T00:00:00+00:00",
        "weird .. run~id^with:all [the] ?chars*",
        "x" * 400,
    ],
)
def test_run_branch_names_are_valid_and_distinct(run_id: str) -> None:
    from graveler_airflow.run_branch import run_branch_name

    name = run_branch_name("my.dag-id", run_id)
    assert branch_name(name) == name and name.startswith("airflow-my-dag-id-")
    assert name != run_branch_name("my.dag-id", run_id + "!")
    assert name != run_branch_name("my.dag-id", run_id, group="other_group")
    assert name == run_branch_name("my.dag-id", run_id)


def test_run_branch_wires_create_before_and_merge_after_the_group() -> None:
    from airflow.sdk import DAG, TriggerRule, task
    from graveler_airflow import GravelerRunBranch

    with DAG("wiring", schedule=None) as dag:

        @task
        def before() -> None: ...

        @task
        def one(branch: str) -> None: ...

        @task
        def two() -> None: ...

        @task
        def after() -> None: ...

        with GravelerRunBranch("lake", group_id="run", delete_on_failure=True) as run:
            a = one(run.branch)
            b = two()
        upstream, downstream = before(), after()
        upstream >> run.group >> downstream

    tasks = dag.task_dict
    assert set(tasks["run.create_branch"].downstream_task_ids) >= {a.operator.task_id, "run.two"}
    assert tasks["run.merge"].upstream_task_ids == {"run.one", "run.two"}
    assert tasks["run.merge"].trigger_rule == TriggerRule.NONE_FAILED
    assert tasks["run.create_branch"].upstream_task_ids == {"before"}
    assert tasks["after"].upstream_task_ids == {"run.merge"}
    discard = tasks["run.discard"]
    assert discard.is_teardown and tasks["run.create_branch"].is_setup
    assert discard.upstream_task_ids == {"run.merge", "run.create_branch"}
    assert run.branch_template == "{{ ti.xcom_pull(task_ids='run.create_branch') }}"
    assert b.operator.task_id == "run.two"


def test_each_merge_task_has_its_own_alias_and_runs_one_at_a_time() -> None:
    """What keeps asset bookkeeping from racing (graveler_airflow.events)."""
    from airflow.sdk import DAG, AssetAlias
    from graveler_airflow import GravelerMergeOperator, GravelerRunBranch, graveler_asset

    table = graveler_asset("lake", "main", "tables/t")
    with DAG("aliases", schedule=None) as dag:
        with GravelerRunBranch("lake", group_id="one", outlets=[table]):
            pass
        with GravelerRunBranch("lake", group_id="two", emit_asset_events=False):
            pass
        GravelerMergeOperator(task_id="merge", repository="lake", source_ref="x")
    tasks = dag.task_dict
    one, two, plain = tasks["one.merge"], tasks["two.merge"], tasks["merge"]
    assert one.outlets == [table, AssetAlias(name="graveler-merges:aliases.one.merge")]
    assert plain.outlets == [AssetAlias(name="graveler-merges:aliases.merge")]
    assert one.max_active_tis_per_dag == 1 and plain.max_active_tis_per_dag == 1
    assert two.outlets == [] and two.max_active_tis_per_dag is None


def test_run_branch_refuses_a_bad_strategy_when_the_dag_is_parsed() -> None:
    from airflow.sdk import DAG
    from graveler_airflow import GravelerRunBranch

    with DAG("bad_strategy", schedule=None), pytest.raises(InvalidArgument, match="strategy"):
        GravelerRunBranch("lake", strategy="ours")


def test_airflow_postgres_extra_resolves_with_the_constraints() -> None:
    """Every requirement of the extra is pinned in constraints.txt within its range, and the
    pinned version is what is installed (``make venv`` installs the extra). The driver it
    brings, psycopg 3, serves both engines of the documented airflow.cfg: asyncpg is not
    needed."""
    import importlib.metadata
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    pins = {}
    for line in (root / "constraints.txt").read_text().splitlines():
        name, sep, version = line.split("#")[0].strip().partition("==")
        if sep:
            pins[canonicalize_name(name)] = version.strip()
    for text in extras["airflow-postgres"]:
        req = Requirement(text)
        pinned = pins[canonicalize_name(req.name)]
        assert req.specifier.contains(pinned), (text, pinned)
        assert importlib.metadata.version(req.name) == pinned
    names = {canonicalize_name(Requirement(t).name) for t in extras["airflow-postgres"]}
    assert {"apache-airflow", "psycopg"} <= names
    from tests.airflow.deployment import documented_config

    config = documented_config()
    assert "sql_alchemy_conn = postgresql+psycopg://" in config
    assert "sql_alchemy_conn_async = postgresql+psycopg://" in config
