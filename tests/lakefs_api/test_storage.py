"""Namespaces as lakeFS's clients spell them (graveler.server.lakefs.storage), without a
server: local and S3 roots, the spellings taken and refused, what config reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from graveler.server.lakefs.errors import ApiError
from graveler.server.lakefs.storage import Storage


@pytest.fixture
def local(tmp_path: Path) -> Storage:
    return Storage.of((tmp_path / "data" / "x").as_uri(), None)


def test_local_names_live_under_the_root(local: Storage, tmp_path: Path) -> None:
    root = (tmp_path / "data").resolve().as_uri()
    assert local.internal("local://lake") == root + "/lake"
    assert local.internal("local:///lake/") == root + "/lake"
    assert local.internal("local://a/b") == root + "/a/b"
    assert local.internal(root + "/lake") == root + "/lake"
    assert local.external(root + "/lake") == "local://lake"
    assert local.address(root + "/lake", "data/ab/cd") == "local://lake/data/ab/cd"
    assert local.linkable(root + "/lake", "local://lake/data/x") == root + "/lake/data/x"


@pytest.mark.parametrize(
    "given",
    ["local://", "local:///", "local://../up", "local://a/../../b", "file:///etc", "gs://b/x", ""],
)
def test_refused_namespaces(local: Storage, given: str) -> None:
    with pytest.raises(ApiError) as caught:
        local.internal(given)
    assert caught.value.status == 400


def test_s3_namespaces_are_themselves(local: Storage) -> None:
    assert local.internal("s3://bucket/a//b/") == "s3://bucket/a/b"
    assert local.external("s3://bucket/a") == "s3://bucket/a"
    assert local.storage_id("s3://bucket/a") == "s3"


def test_config_of_a_local_server(local: Storage, tmp_path: Path) -> None:
    config = local.config()
    assert config["blockstore_type"] == "local" and config["default_namespace_prefix"] == "local://"
    assert config["pre_sign_support"] is False and config["blockstore_id"] == ""
    assert local.storage_id((tmp_path / "data" / "lake").as_uri()) == ""
    [other] = local.config_list()
    assert other["blockstore_id"] == "s3" and other["pre_sign_support"] is True


def test_config_of_a_server_rooted_on_s3(tmp_path: Path) -> None:
    storage = Storage.of((tmp_path / "data" / "x").as_uri(), "s3://lake-bucket/repos/")
    config = storage.config()
    assert config["blockstore_type"] == "s3"
    assert config["default_namespace_prefix"] == "s3://lake-bucket/repos"
    assert config["pre_sign_support"] is True
    assert storage.storage_id("s3://lake-bucket/repos/x") == ""
    assert storage.storage_id((tmp_path / "data" / "x").as_uri()) == "local"
    assert storage.internal("local://lake").endswith("/data/lake")  # still the home's disk
