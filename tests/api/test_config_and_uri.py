"""ClientSettings (graveler.core.config, the one settings parser) and GravelerURI
(graveler.core.uri)."""

from __future__ import annotations

import pickle

import pytest

from graveler import ClientSettings, Graveler, GravelerURI
from graveler.core.errors import InvalidArgument, InvalidURI

SECRET = "S3CRET-sentinel-7f3a"


def test_from_mapping_reads_flat_keys_and_store_options():
    s = ClientSettings.from_mapping(
        {
            "HOME": "/h",
            "database_url": "sqlite:////x.db",
            "cache_ram_bytes": "1024",
            "s3_endpoint_url": "http://127.0.0.1:9",
            "aws_access_key_id": "AK",
            "aws_secret_access_key": SECRET,
            "store.max_attempts": "3",
            "path": "graveler://ignored/main",  # unrelated keys are ignored
            "mode": "",
        }
    )
    assert (s.home, s.database_url, s.cache_ram_bytes) == ("/h", "sqlite:////x.db", 1024)
    assert s.store_options == {
        "endpoint_url": "http://127.0.0.1:9",
        "access_key_id": "AK",
        "secret_access_key": SECRET,
        "max_attempts": 3,
    }


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"cache_ram_bytes": "lots"}, "cache_ram_bytes must be an integer"),
        ({"cache_disk_bytes": "-1"}, "must not be negative"),
        ({"store.bogus": "1"}, "unknown store option 'bogus'"),
        ({"store.max_attempts": "x"}, "store option 'max_attempts' has a malformed value"),
    ],
)
def test_from_mapping_refuses_malformed_values(values, message):
    with pytest.raises(InvalidArgument, match=message):
        ClientSettings.from_mapping(values)


def test_from_env_names_the_variable_at_fault():
    env = {"GRAVELER_HOME": "/h", "GRAVELER_CACHE_DISK_BYTES": "x", "AWS_REGION": "eu-west-1"}
    with pytest.raises(InvalidArgument, match="GRAVELER_CACHE_DISK_BYTES"):
        ClientSettings.from_env(env)
    env["GRAVELER_CACHE_DISK_BYTES"] = "10"
    s = ClientSettings.from_env({**env, "AWS_DEFAULT_REGION": "us-east-2"})
    assert (
        s.home == "/h" and s.cache_disk_bytes == 10 and s.store_options == {"region": "eu-west-1"}
    )


def test_over_fills_unset_fields_and_never_mixes_credentials():
    mine = ClientSettings(
        home="/mine", store_options={"access_key_id": "A1", "secret_access_key": "S1"}
    )
    theirs = ClientSettings(
        home="/theirs",
        database_url="sqlite:////t.db",
        store_options={"region": "r", "access_key_id": "A2", "session_token": "T2"},
    )
    merged = mine.over(theirs)
    assert merged.home == "/mine" and merged.database_url == "sqlite:////t.db"
    assert merged.store_options == {"region": "r", "access_key_id": "A1", "secret_access_key": "S1"}
    assert ClientSettings().over(theirs).store_options == theirs.store_options


def test_repr_hides_every_secret_and_to_mapping_round_trips():
    s = ClientSettings(
        database_url=f"postgresql+psycopg://u:{SECRET}@db:5432/g",
        store_options={"secret_access_key": SECRET, "session_token": SECRET, "region": "r"},
    )
    assert SECRET not in repr(s) and SECRET not in str(s) and SECRET not in f"{[s]}"
    assert "u:***@db:5432" in repr(s)
    again = ClientSettings.from_mapping(s.to_mapping())
    assert again == s and pickle.loads(pickle.dumps(s)) == s


def test_the_client_takes_arguments_over_settings_over_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAVELER_HOME", str(tmp_path / "env-home"))
    monkeypatch.setenv("GRAVELER_CACHE_RAM_BYTES", "4096")
    settings = ClientSettings(home=str(tmp_path / "settings-home"), cache_ram_bytes=8192)
    with Graveler(settings=settings) as gv:
        assert gv.home == tmp_path / "settings-home"
        assert gv.settings.cache_ram_bytes == 8192
    with Graveler(tmp_path / "arg-home", settings=settings) as gv:
        assert gv.home == tmp_path / "arg-home"
        repo = gv.create_repository("lake")
        assert repo.settings == gv.settings
    with Graveler() as gv:
        assert gv.home == tmp_path / "env-home" and gv.settings.cache_ram_bytes == 4096


# --- URIs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parts", "canonical"),
    [
        ("graveler://lake", ("lake", None, None), "graveler://lake"),
        ("graveler://lake/main", ("lake", "main", None), "graveler://lake/main"),
        ("graveler://lake/main/", ("lake", "main", None), "graveler://lake/main"),
        (
            "lakefs://lake/main~1/a/b.csv",
            ("lake", "main~1", "a/b.csv"),
            "graveler://lake/main~1/a/b.csv",
        ),
    ],
)
def test_uris_parse_and_print_one_way(text, parts, canonical):
    uri = GravelerURI.parse(text)
    assert (uri.repository, uri.ref, uri.path) == parts and str(uri) == canonical
    assert GravelerURI.parse(str(uri)) == uri


@pytest.mark.parametrize(
    "text",
    [
        "s3://lake/main",
        "graveler://",
        "graveler:///main",
        "graveler://lake//x",
        "graveler://Bad_Name/main",
        7,
    ],
)
def test_malformed_uris_are_refused(text):
    with pytest.raises(InvalidURI):
        GravelerURI.parse(text)


def test_uri_requirements_and_helpers():
    with pytest.raises(InvalidURI, match="needs a ref"):
        GravelerURI.parse("graveler://lake", ref=True)
    with pytest.raises(InvalidURI, match="needs a path"):
        GravelerURI.parse("graveler://lake/main", path=True)
    with pytest.raises(InvalidURI, match="without '/'"):
        GravelerURI("lake", "feature/x")
    base = GravelerURI("lake", "main", "tables")
    assert str(base.child("/t/part-0/")) == "graveler://lake/main/tables/t/part-0"
    assert str(base.at("0" * 64)) == f"graveler://lake/{'0' * 64}/tables"
    assert str(GravelerURI("lake", "main").child("")) == "graveler://lake/main"
