"""ListObjectsV2 and ListObjects (V1) through boto3 against graveler and moto: the pages
(keys, common prefixes, truncation) must be the same, key for key."""

from __future__ import annotations

from typing import Any

import pytest

from tests.gateway.conftest import Twin, outcome

KEYS = [
    "a/1",
    "a/2",
    "a/b/3",
    "a/b/4",
    "c",
    "d/e/f/5",
    "d/x",
    "plus+sign",
    "sp ace/6",
    "ümlaut/7",
    "z",
]


@pytest.fixture
def filled(twin: Twin) -> Twin:
    for client, bucket in twin.both():
        for key in KEYS:
            client.put_object(Bucket=bucket, Key=twin.key(key), Body=b"x")
    return twin


def _pages_v2(client: Any, bucket: str, **kw: Any) -> list[tuple[list[str], list[str], bool]]:
    pages = []
    token: str | None = None
    while True:
        args = dict(kw, **({"ContinuationToken": token} if token else {}))
        r = client.list_objects_v2(Bucket=bucket, **args)
        pages.append(
            (
                [o["Key"] for o in r.get("Contents", [])],
                [p["Prefix"] for p in r.get("CommonPrefixes", [])],
                r["IsTruncated"],
            )
        )
        assert r["KeyCount"] == len(pages[-1][0]) + len(pages[-1][1])
        token = r.get("NextContinuationToken")
        if not r["IsTruncated"]:
            return pages


def _pages_v1(client: Any, bucket: str, **kw: Any) -> list[tuple[list[str], list[str], bool]]:
    pages = []
    marker = ""
    while True:
        r = client.list_objects(Bucket=bucket, Marker=marker, **kw)
        keys = [o["Key"] for o in r.get("Contents", [])]
        prefixes = [p["Prefix"] for p in r.get("CommonPrefixes", [])]
        pages.append((keys, prefixes, r["IsTruncated"]))
        if not r["IsTruncated"]:
            return pages
        marker = r.get("NextMarker") or (keys + prefixes)[-1]


@pytest.mark.parametrize("max_keys", [1, 2, 3, 1000])
@pytest.mark.parametrize("delimiter", ["", "/"])
@pytest.mark.parametrize("sub", ["", "a/", "a", "d/e/", "nothing/"])
def test_v2_pages_agree(filled: Twin, max_keys: int, delimiter: str, sub: str):
    args = {"Prefix": filled.key(sub), "MaxKeys": max_keys, "Delimiter": delimiter}
    gv, moto = (_pages_v2(c, b, **args) for c, b in filled.both())
    assert gv == moto


@pytest.mark.parametrize("max_keys", [2, 1000])
@pytest.mark.parametrize("delimiter", ["", "/"])
def test_v1_pages_agree(filled: Twin, max_keys: int, delimiter: str):
    args = {"Prefix": filled.key(""), "MaxKeys": max_keys, "Delimiter": delimiter}
    gv, moto = (_pages_v1(c, b, **args) for c, b in filled.both())
    if (max_keys, delimiter) != (2, "/"):
        assert gv == moto
        return
    # S3 counts keys and common prefixes together against MaxKeys. MOTO_DEVIATES in V1 with
    # a delimiter: a page holds MaxKeys keys plus the prefixes among them, repeated on later
    # pages. The pages' union must agree.
    assert all(len(keys) + len(prefixes) <= max_keys for keys, prefixes, _ in gv)
    assert any(len(keys) + len(prefixes) > max_keys for keys, prefixes, _ in moto)
    for part in (0, 1):
        ours = [x for page in gv for x in page[part]]
        assert ours == list(dict.fromkeys(x for page in moto for x in page[part]))


@pytest.mark.parametrize("after", ["a/1", "a/b/", "c", "zz", ""])
def test_start_after_agrees(filled: Twin, after: str):
    args = {"Prefix": filled.key(""), "StartAfter": filled.key(after) if after else ""}
    gv, moto = (_pages_v2(c, b, **args) for c, b in filled.both())
    assert gv == moto


def test_url_encoding_agrees(filled: Twin):
    def raw(client: Any, bucket: str) -> Any:
        captured: dict[str, bytes] = {}

        def keep(http_response: Any, **_: Any) -> None:
            captured["body"] = http_response.content

        client.meta.events.register("after-call.s3.ListObjectsV2", keep)
        try:
            decoded = client.list_objects_v2(
                Bucket=bucket, Prefix=filled.key(""), EncodingType="url"
            )
        finally:
            client.meta.events.unregister("after-call.s3.ListObjectsV2", keep)
        return [o["Key"] for o in decoded["Contents"]], b"%C3%BCmlaut" in captured["body"]

    gv, moto = (raw(c, b) for c, b in filled.both())
    assert gv == moto
    assert gv[1] is True  # the keys really went over the wire encoded


def test_max_keys_zero_and_bad_token(filled: Twin):
    gv, moto = (
        outcome(
            lambda c=c, b=b: c.list_objects_v2(Bucket=b, Prefix=filled.key(""), MaxKeys=0).get(
                "Contents"
            )
        )
        for c, b in filled.both()
    )
    assert gv == moto
    bad = outcome(
        lambda: filled.gv.list_objects_v2(
            Bucket="lake", Prefix=filled.key(""), ContinuationToken="%%%"
        )
    )
    assert bad == ("error", ("InvalidArgument", 400))


def test_branches_are_listed_as_prefixes(gateway: Any, filled: Twin):
    r = filled.gv.list_objects_v2(Bucket="lake", Delimiter="/")
    prefixes = [p["Prefix"] for p in r["CommonPrefixes"]]
    assert "main/" in prefixes and f"{filled.branch}/" in prefixes
    assert "Contents" not in r


def test_list_at_tags_and_commits(filled: Twin, engine: Any):
    repo = engine.repository("lake")
    commit = repo.commit(filled.branch, "listing fixture")
    repo.create_tag(f"{filled.branch}-tag", commit.id)
    for ref in (commit.id, commit.id[:12], f"{filled.branch}-tag", f"{filled.branch}@"):
        r = filled.gv.list_objects_v2(Bucket="lake", Prefix=f"{ref}/a/", Delimiter="/")
        assert [o["Key"] for o in r["Contents"]] == [f"{ref}/a/1", f"{ref}/a/2"], ref
        assert [p["Prefix"] for p in r["CommonPrefixes"]] == [f"{ref}/a/b/"], ref
        got = filled.gv.get_object(Bucket="lake", Key=f"{ref}/a/1")["Body"].read()
        assert got == b"x"
    before = outcome(lambda: filled.gv.get_object(Bucket="lake", Key=f"{filled.branch}~1/a/1"))
    assert before == ("error", ("NoSuchKey", 404))  # the commit before the objects were added


def test_owners_are_listed_as_s3_lists_them(filled: Twin):
    """ListObjects (V1) names each object's owner; V2 only with FetchOwner, as on S3."""
    seen = []
    for client, bucket in filled.both():
        prefix = filled.key("")
        v1 = client.list_objects(Bucket=bucket, Prefix=prefix)["Contents"]
        v2 = client.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"]
        fetched = client.list_objects_v2(Bucket=bucket, Prefix=prefix, FetchOwner=True)
        seen.append(
            (
                all("Owner" in o for o in v1),
                any("Owner" in o for o in v2),
                all("Owner" in o for o in fetched["Contents"]),
            )
        )
    assert seen[0] == seen[1] == (True, False, True)
