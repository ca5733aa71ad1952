"""open_object_store dispatch, join_uri, and the key rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from graveler.core.errors import InvalidKey, InvalidURI
from graveler.storage.objectstore import join_uri, open_object_store
from graveler.storage.objectstore.keys import MAX_KEY_BYTES, validate_key, validate_prefix
from graveler.storage.objectstore.local import LocalObjectStore
from graveler.storage.objectstore.memory import MemoryObjectStore
from graveler.storage.objectstore.s3 import S3ObjectStore


def test_dispatch_by_scheme(tmp_path: Path) -> None:
    assert isinstance(open_object_store(f"file://{tmp_path}"), LocalObjectStore)
    assert isinstance(open_object_store(f"file://localhost{tmp_path}"), LocalObjectStore)
    assert isinstance(open_object_store(str(tmp_path)), LocalObjectStore)
    assert isinstance(open_object_store("mem://dispatch"), MemoryObjectStore)
    s3 = open_object_store("s3://my-bucket/some/prefix/", endpoint_url="http://127.0.0.1:9")
    assert isinstance(s3, S3ObjectStore)
    assert (s3.bucket, s3.prefix, s3.uri) == (
        "my-bucket",
        "some/prefix/",
        "s3://my-bucket/some/prefix",
    )


@pytest.mark.parametrize(
    "uri",
    [
        "",
        "gs://bucket/x",
        "relative/path",
        "file://host/abs",
        "file:relative",
        "s3://",
        "s3:///x",
        "s3://b/x?versionId=1",
        "mem://",
    ],
)
def test_bad_uris(uri: str) -> None:
    with pytest.raises(InvalidURI):
        open_object_store(uri)


def test_options_are_only_for_s3(tmp_path: Path) -> None:
    with pytest.raises(InvalidURI, match="endpoint_url"):
        open_object_store(str(tmp_path), endpoint_url="http://x")
    with pytest.raises(InvalidURI):
        open_object_store("mem://x", region="eu-west-1")


def test_join_uri() -> None:
    assert join_uri("s3://b/p", "_graveler/ab") == "s3://b/p/_graveler/ab"
    assert join_uri("s3://b/", "k") == "s3://b/k"
    assert join_uri("file:///tmp/x", "a/b") == "file:///tmp/x/a/b"
    with pytest.raises(InvalidKey):
        join_uri("mem://x", "../y")


@pytest.mark.parametrize(
    "key", ["a", "a/b", "_graveler/ab12", ".hidden/..x/x..", "é/日本", "k" * 1024]
)
def test_valid_keys(key: str) -> None:
    assert validate_key(key) == key


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("", "empty"),
        ("/a", "starts with '/'"),
        ("a//b", "empty component"),
        ("a/", "empty component"),
        ("./a", "'.'"),
        ("a/../b", "'..'"),
        ("a\x00b", "NUL"),
        ("k" * (MAX_KEY_BYTES + 1), "1025 bytes"),
        ("é" * 513, "1026 bytes"),
        ("\udcff", "UTF-8"),
    ],
)
def test_invalid_keys_say_why(key: str, why: str) -> None:
    with pytest.raises(InvalidKey, match=why.replace("(", r"\(")):
        validate_key(key)


def test_non_str_key_is_refused() -> None:
    with pytest.raises(InvalidKey):
        validate_key(b"bytes")  # type: ignore[arg-type]


@pytest.mark.parametrize("prefix", ["", "a", "a/", "data/2f/ab", "a/.", "a/.."])
def test_valid_prefixes(prefix: str) -> None:
    assert validate_prefix(prefix) == prefix


@pytest.mark.parametrize("prefix", ["/", "../", "a//b", "./", "a\x00"])
def test_invalid_prefixes(prefix: str) -> None:
    with pytest.raises(InvalidKey):
        validate_prefix(prefix)
