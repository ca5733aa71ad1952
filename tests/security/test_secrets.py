"""No secret is printed: every error path the suite knows, triggered with a sentinel database
password (and S3 secret), in the CLI, the Python API, fsspec, the Airflow hook and the Dagster
resource; Spark's data source option in ``test_spark_secrets.py``. Log records are checked
too. A malformed database URL is a usage error in the CLI: exit 2 and one line.

Reproduced before the fix: ``graveler --database-url 'postgresql+psycopg2://u:S3CRETPW@host/db'
repo list`` printed the URL with its password, and ``host:notaport`` gave a traceback, exit 1.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import dagster as dg
import fsspec
import pytest

import tests.airflow.conftest  # noqa: F401  (AIRFLOW_HOME in a temporary directory first)
from graveler.cli import main
from graveler.client import Graveler
from graveler.core.errors import GravelerError
from tests.security.secrets import (
    PASSWORD,
    S3_SECRET,
    assert_hidden,
    closed_port,
    each_url,
    shown,
)


@pytest.fixture(autouse=True)
def every_log_record(caplog: pytest.LogCaptureFixture) -> object:
    caplog.set_level(logging.DEBUG)
    yield
    assert_hidden(caplog.text)


@each_url
def test_cli(url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--home", str(tmp_path), "--database-url", url, "repo", "list"])
    out, err = capsys.readouterr()
    assert code in (1, 2) and out == "" and err.count("\n") == 1 and err.startswith("graveler: ")
    assert_hidden(out, err)


def test_cli_malformed_url_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAVELER_DATABASE_URL", f"postgresql+psycopg://u:{PASSWORD}@h:notaport/d")
    assert main(["--home", str(tmp_path), "repo", "list"]) == 2
    err = capsys.readouterr().err
    assert err == "graveler: invalid database URL postgresql+psycopg://u:***@h:notaport/d: " + (
        "invalid literal for int() with base 10: 'notaport'\n"
    )


@each_url
def test_python_api(url: str, tmp_path: Path) -> None:
    with pytest.raises(GravelerError) as failed:
        Graveler(home=tmp_path, database_url=url)
    assert_hidden(shown(failed.value))


@each_url
def test_fsspec(url: str, tmp_path: Path) -> None:
    fs = fsspec.filesystem(
        "graveler", home=str(tmp_path), database_url=url, skip_instance_cache=True
    )
    with pytest.raises(GravelerError) as failed:
        fs.ls("graveler://lake/main/")
    assert_hidden(shown(failed.value), repr(fs), str(fs))


def test_s3_store_options(tmp_path: Path, aws_env: None) -> None:
    options = {
        "endpoint_url": f"http://127.0.0.1:{closed_port()}",
        "access_key_id": "AKIDEXAMPLE",
        "secret_access_key": S3_SECRET,
        "max_attempts": 1,
        "connect_timeout": 1.0,
    }
    with Graveler(home=tmp_path, store_options=options) as gv:
        with pytest.raises(GravelerError) as failed:
            gv.create_repository("lake", "s3://a-bucket/lake")
        assert_hidden(shown(failed.value), repr(gv.object_store("s3://a-bucket/lake")))
        assert gv.list_repositories() == []


@each_url
def test_airflow_hook(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graveler_airflow.hooks.graveler import GravelerHook
    from sqlalchemy.engine import make_url

    try:  # the password as Airflow stores it: in the connection's password field
        parsed = make_url(url)
        login, password = parsed.username, parsed.password
        extra_url = parsed.set(username=None, password=None).render_as_string()
    except ValueError:
        login, password, extra_url = None, None, url
    conn = {"conn_type": "graveler", "login": login, "password": password,
            "extra": {"database_url": extra_url, "home": str(tmp_path)}}  # fmt: skip
    monkeypatch.setenv("AIRFLOW_CONN_GV_SECRET", json.dumps(conn))
    hook = GravelerHook("gv_secret")
    ok, message = hook.test_connection()
    assert not ok
    assert_hidden(message)
    try:
        assert_hidden(repr(hook.get_settings()))
    except GravelerError as exc:
        assert_hidden(shown(exc))


@each_url
def test_dagster_resource(url: str, tmp_path: Path) -> None:
    from graveler_dagster import GravelerResource, graveler_definitions

    resource = GravelerResource(
        repository="lake",
        database_url=url,
        home=str(tmp_path / "gv"),
        s3_secret_access_key=S3_SECRET,
    )
    with pytest.raises(GravelerError) as failed:
        resource.get_client()
    assert_hidden(shown(failed.value), repr(resource), str(resource))

    @dg.asset
    def table() -> dict[str, int]:
        return {"rows": 1}

    home = tmp_path / "dagster_home"
    home.mkdir()
    with dg.DagsterInstance.local_temp(str(home)) as instance:
        resources = graveler_definitions(resource)["resources"]
        result = dg.materialize(
            [table], instance=instance, resources=resources, raise_on_error=False
        )
        assert not result.success
        errors = [
            e.event_specific_data.error.to_string()
            for e in result.all_events
            if e.is_failure and getattr(e.event_specific_data, "error", None)
        ]
        assert errors
        logs = [str(r.dagster_event or r.user_message) for r in instance.all_logs(result.run_id)]
        assert_hidden(errors, logs)
