"""Which settings a Spark job uses: resolved once on the driver (options, register() defaults
with Spark's S3A keys, the driver's environment), shipped with the job, never shown.
The cluster tests (tests/spark_cluster) run the same code on executors with clean
environments; these pin the rules."""

from __future__ import annotations

import pickle
import uuid

import pytest
from graveler_spark import GravelerDataSource, register, spark_session
from graveler_spark.job import WriteJob
from graveler_spark.options import Target
from graveler_spark.settings import from_spark_conf, resolve
from graveler_spark.storage import store_for

from graveler import ClientSettings
from graveler.core.errors import StorageError

SECRET = "s3cr3t-" + uuid.uuid4().hex


def test_s3a_keys_become_store_options() -> None:
    settings = from_spark_conf(
        {
            "spark.hadoop.fs.s3a.endpoint": "127.0.0.1:9000",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.endpoint.region": "eu-west-1",
            "spark.hadoop.fs.s3a.access.key": "AKIDEXAMPLE",
            "spark.hadoop.fs.s3a.secret.key": SECRET,
            "fs.s3a.session.token": "token",
            "spark.hadoop.fs.s3a.bucket.other.endpoint": "ignored:1",
            "spark.executor.memory": "1g",
        }
    )
    assert dict(settings.store_options) == {
        "endpoint_url": "http://127.0.0.1:9000",
        "region": "eu-west-1",
        "access_key_id": "AKIDEXAMPLE",
        "secret_access_key": SECRET,
        "session_token": "token",
    }
    assert SECRET not in repr(settings)
    https = from_spark_conf({"fs.s3a.endpoint": "a:1", "spark.hadoop.fs.s3a.endpoint": "b:2"})
    assert https.store_options == {"endpoint_url": "https://b:2"}  # prefixed wins; TLS default
    assert from_spark_conf({"spark.hadoop.fs.s3a.endpoint": "http://c:3"}).store_options == {
        "endpoint_url": "http://c:3"
    }


def test_options_win_over_register_defaults_which_win_over_the_driver_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRAVELER_S3_ENDPOINT_URL", "http://env:1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "ENVKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET")
    monkeypatch.setenv("AWS_REGION", "env-region")
    monkeypatch.setenv("GRAVELER_DATABASE_URL", "sqlite:////tmp/env.db")
    defaults = ClientSettings(
        store_options={"endpoint_url": "http://registered:2", "access_key_id": "REG"}
        | {"secret_access_key": "REGSECRET"}
    )
    got = resolve({"store.endpoint_url": "http://option:3", "home": "/h"}, defaults)
    assert got.home == "/h" and got.database_url == "sqlite:////tmp/env.db"
    assert dict(got.store_options) == {
        "endpoint_url": "http://option:3",
        "access_key_id": "REG",  # one credential set, from the first source that has one
        "secret_access_key": "REGSECRET",
        "region": "env-region",
    }
    only_env = resolve({}, ClientSettings())
    assert only_env.store_options["access_key_id"] == "ENVKEY"
    assert only_env.store_options["endpoint_url"] == "http://env:1"


def test_register_binds_the_sessions_s3a_keys(spark) -> None:
    session = spark.newSession()
    session.conf.set("spark.hadoop.fs.s3a.endpoint", "http://127.0.0.1:9")
    session.conf.set("spark.hadoop.fs.s3a.access.key", "AKIDEXAMPLE")
    session.conf.set("spark.hadoop.fs.s3a.secret.key", SECRET)
    try:
        bound = register(session, store_options={"region": "eu-west-1"})
        assert dict(bound.defaults.store_options) == {
            "region": "eu-west-1",
            "endpoint_url": "http://127.0.0.1:9",
            "access_key_id": "AKIDEXAMPLE",
            "secret_access_key": SECRET,
        }
    finally:
        session.dataSource.register(GravelerDataSource)


def test_the_shipped_job_carries_the_settings_and_shows_no_secret(tmp_path) -> None:
    settings = ClientSettings(
        database_url=f"postgresql://user:{SECRET}@db/x",
        store_options={"access_key_id": "AKIDEXAMPLE", "secret_access_key": SECRET},
    )
    job = WriteJob("0" * 32, settings, Target("lake", "main", "t"), "s3://bucket/ns")
    assert SECRET not in repr(job) and SECRET not in str(job)
    assert pickle.loads(pickle.dumps(job)).settings == settings  # what executors receive


def test_an_executor_without_credentials_is_told_where_they_go(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    namespace = f"s3://no-credentials-{uuid.uuid4().hex[:8]}/ns"
    with pytest.raises(StorageError) as caught:
        store_for(namespace, {"endpoint_url": "http://127.0.0.1:9"})
    message = str(caught.value)
    for where in ("AWS_ACCESS_KEY_ID", "store.access_key_id", "register(", "fs.s3a.access.key"):
        assert where in message
    # explicit credentials from the driver need nothing from this host
    store_for(namespace, {"access_key_id": "AKIDEXAMPLE", "secret_access_key": SECRET})


def test_local_namespaces_ignore_store_options_from_the_environment(tmp_path) -> None:
    """The driver's AWS settings travel with every job; a file:// store takes none."""
    store = store_for(tmp_path.as_uri(), {"access_key_id": "AKID", "secret_access_key": SECRET})
    assert store.local_path("x") == str(tmp_path / "x")


def test_spark_session_hands_back_the_running_session(spark) -> None:
    """One SparkContext per process: the helper returns it rather than start another."""
    again = spark_session("local[1]", config={"spark.sql.shuffle.partitions": "7"})
    assert again.sparkContext is spark.sparkContext
    assert again.sparkContext.master == "local[2]"
