"""Object calls through boto3, each run against graveler's gateway and against moto, the
answers compared: bodies, ETags, headers, error codes and statuses.

moto is the S3 implementation at hand, not S3 itself. Where it departs from S3's documented
behaviour the test says so and asserts both answers (MOTO_DEVIATES), so that a change on
either side shows."""

from __future__ import annotations

import base64
import hashlib
import os
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graveler.client import Graveler
from graveler.server.s3.object_reads import STREAM_PIECE, checksum_headers
from graveler.storage.entry import ObjectEntry
from tests.gateway.conftest import Gateway, Twin, outcome

BODY = b"0123456789abcdefghij"


def _head(client: Any, bucket: str, key: str, **kw: Any) -> tuple[str, Any]:
    return outcome(lambda: client.head_object(Bucket=bucket, Key=key, **kw))


def _get(client: Any, bucket: str, key: str, **kw: Any) -> tuple[str, Any]:
    def call() -> dict[str, Any]:
        r = client.get_object(Bucket=bucket, Key=key, **kw)
        return {
            "body": r["Body"].read(),
            "etag": r["ETag"],
            "type": r["ContentType"],
            "range": r.get("ContentRange"),
            "length": r["ContentLength"],
            "meta": r["Metadata"],
            "status": r["ResponseMetadata"]["HTTPStatusCode"],
        }

    return outcome(call)


def _on_both(twin: Twin, fn: Any) -> list[Any]:
    return [fn(client, bucket) for client, bucket in twin.both()]


def _put(twin: Twin, path: str, body: bytes = BODY, **kw: Any) -> list[Any]:
    key = twin.key(path)
    return _on_both(
        twin, lambda c, b: outcome(lambda: c.put_object(Bucket=b, Key=key, Body=body, **kw)["ETag"])
    )


def test_put_get_head_agree(twin: Twin):
    put = _put(twin, "a/file.csv", ContentType="text/csv", Metadata={"owner": "etl", "run": "42"})
    assert put[0] == put[1] == ("ok", f'"{hashlib.md5(BODY).hexdigest()}"')
    got = _on_both(twin, lambda c, b: _get(c, b, twin.key("a/file.csv")))
    assert got[0] == got[1]
    assert got[0][1]["meta"] == {"owner": "etl", "run": "42"} and got[0][1]["type"] == "text/csv"
    heads = _on_both(twin, lambda c, b: _head(c, b, twin.key("a/file.csv")))
    for field in ("ContentLength", "ETag", "ContentType", "Metadata", "AcceptRanges"):
        assert heads[0][1][field] == heads[1][1][field], field
    assert heads[0][1]["LastModified"] <= datetime.now(UTC) + timedelta(seconds=1)


@pytest.mark.parametrize("pieces", [2, 2.5])
def test_streamed_bodies_arrive_whole(twin: Twin, pieces: float):
    """Bodies over the small-body limit are streamed to the engine a piece at a time, the
    next piece gathered while the last is written: one ending on a piece boundary and one
    ending inside a piece come back byte for byte, with S3's ETag."""
    body = bytes(range(256)) * int(pieces * STREAM_PIECE / 256)
    put = _put(twin, "streamed.bin", body)
    assert put[0] == put[1] == ("ok", f'"{hashlib.md5(body).hexdigest()}"')
    got = twin.gv.get_object(Bucket=twin.gv_bucket, Key=twin.key("streamed.bin"))
    assert got["Body"].read() == body


def test_missing_keys_agree(twin: Twin):
    got = _on_both(twin, lambda c, b: _get(c, b, twin.key("nope")))
    assert got[0] == got[1] == ("error", ("NoSuchKey", 404))
    heads = _on_both(twin, lambda c, b: _head(c, b, twin.key("nope")))
    assert heads[0] == heads[1] == ("error", ("404", 404))


@pytest.mark.parametrize(
    "spec",
    ["bytes=0-4", "bytes=5-", "bytes=-3", "bytes=3-1000", "bytes=19-19", "bytes=20-30", "bytes=-0"],
)
def test_ranges_agree(twin: Twin, spec: str):
    _put(twin, "r.bin")
    got = _on_both(twin, lambda c, b: _get(c, b, twin.key("r.bin"), Range=spec))
    assert got[0] == got[1]


def test_conditional_reads_agree(twin: Twin):
    _put(twin, "c.bin")
    etag = f'"{hashlib.md5(BODY).hexdigest()}"'
    past = datetime.now(UTC) - timedelta(days=1)
    future = datetime.now(UTC) + timedelta(days=1)
    cases = [
        {"IfMatch": etag},
        {"IfMatch": '"0000"'},
        {"IfNoneMatch": etag},
        {"IfNoneMatch": '"0000"'},
        {"IfModifiedSince": past},
        {"IfModifiedSince": future},
        {"IfUnmodifiedSince": past},
        {"IfUnmodifiedSince": future},
    ]
    for case in cases:
        got = _on_both(twin, lambda c, b, kw=case: _get(c, b, twin.key("c.bin"), **kw))
        assert got[0] == got[1], case
        heads = _on_both(twin, lambda c, b, kw=case: _head(c, b, twin.key("c.bin"), **kw))
        assert heads[0][0] == heads[1][0] and (heads[0][0] == "ok" or heads[0] == heads[1]), case


def test_conditional_read_precedence_follows_s3(twin: Twin):
    """S3's GetObject documentation: If-Match true with If-Unmodified-Since false gives 200;
    If-None-Match false with If-Modified-Since true gives 304. MOTO_DEVIATES on the first
    (412)."""
    _put(twin, "c.bin")
    etag = f'"{hashlib.md5(BODY).hexdigest()}"'
    past = datetime.now(UTC) - timedelta(days=1)
    gv, moto = _on_both(
        twin, lambda c, b: _get(c, b, twin.key("c.bin"), IfMatch=etag, IfUnmodifiedSince=past)
    )
    assert gv[0] == "ok" and gv[1]["body"] == BODY
    assert moto == ("error", ("PreconditionFailed", 412))
    gv, moto = _on_both(
        twin, lambda c, b: _head(c, b, twin.key("c.bin"), IfNoneMatch=etag, IfModifiedSince=past)
    )
    assert gv == moto == ("error", ("304", 304))


def test_conditional_puts_agree(twin: Twin):
    first = _put(twin, "p.bin", IfNoneMatch="*")
    assert first[0] == first[1] and first[0][0] == "ok"
    again = _put(twin, "p.bin", b"other", IfNoneMatch="*")
    assert again[0] == again[1] == ("error", ("PreconditionFailed", 412))
    wrong = _put(twin, "p.bin", b"other", IfMatch='"0123"')
    assert wrong[0] == wrong[1] == ("error", ("PreconditionFailed", 412))
    right = _put(twin, "p.bin", b"other", IfMatch=first[0][1])
    assert right[0] == right[1] and right[0][0] == "ok"
    absent = _put(twin, "absent.bin", b"x", IfMatch='"0123"')
    assert absent[0] == absent[1] == ("error", ("NoSuchKey", 404))


def test_content_md5_is_checked(twin: Twin):
    good = base64.b64encode(hashlib.md5(BODY).digest()).decode()
    bad = base64.b64encode(hashlib.md5(b"else").digest()).decode()
    assert _put(twin, "m1", ContentMD5=good)[0][0] == "ok"
    got = _put(twin, "m2", ContentMD5=bad)
    # S3 refuses a body whose MD5 is not the Content-MD5 (BadDigest). MOTO_DEVIATES: it skips
    # the check when the SDK also sends a CRC32 trailer, as boto3 now does by default.
    assert got[0] == ("error", ("BadDigest", 400))
    assert got[1][0] == "ok"
    missing = _get(twin.gv, twin.gv_bucket, twin.key("m2"))
    assert missing == ("error", ("NoSuchKey", 404))


@pytest.mark.parametrize("algorithm", ["CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"])
def test_trailing_checksums(twin: Twin, algorithm: str):
    body = bytes(range(256)) * 4000
    got = _put(twin, f"ck-{algorithm}", body, ChecksumAlgorithm=algorithm)
    assert got[0] == got[1] and got[0][0] == "ok"
    back = _on_both(twin, lambda c, b: _get(c, b, twin.key(f"ck-{algorithm}")))
    assert back[0][1]["body"] == body == back[1][1]["body"]


def test_checksum_mode_returns_the_sha256_as_s3_does(twin: Twin, gateway: Gateway):
    """A whole-object GET or HEAD with ``ChecksumMode=ENABLED`` gets the object's SHA-256
    (base64) as S3 gives it for an object uploaded with that algorithm; a ranged GET gets
    none (it is not the whole object's), nor does a call that does not ask."""
    body = os.urandom(3 * STREAM_PIECE)  # streamed, not read whole
    _put(twin, "sum.bin", body, ChecksumAlgorithm="SHA256")
    want = base64.b64encode(hashlib.sha256(body).digest()).decode()
    for client, bucket in twin.both():
        key = twin.key("sum.bin")
        got = client.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
        assert got["ChecksumSHA256"] == want and got["Body"].read() == body
        head = client.head_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
        assert head["ChecksumSHA256"] == want
        part = client.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED", Range="bytes=0-9")
        assert "ChecksumSHA256" not in part and part["Body"].read() == body[:10]
    assert "x-amz-checksum-sha256" not in _raw_get(gateway, twin.key("sum.bin"))


def test_object_attributes_agree(twin: Twin):
    """GetObjectAttributes: ETag (unquoted), checksum, storage class and size as S3 gives
    them for an object uploaded with a SHA-256; ObjectParts only for an assembled one."""
    body = os.urandom(1000)
    _put(twin, "attrs.bin", body, ChecksumAlgorithm="SHA256")
    asked = ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"]
    got = _on_both(
        twin,
        lambda c, b: outcome(
            lambda: c.get_object_attributes(
                Bucket=b, Key=twin.key("attrs.bin"), ObjectAttributes=asked
            )
        ),
    )
    fields = ("ETag", "StorageClass", "ObjectSize")
    for _, answer in got:
        assert "ObjectParts" not in answer
        assert (
            answer["Checksum"]["ChecksumSHA256"]
            == base64.b64encode(hashlib.sha256(body).digest()).decode()
        )
    assert [{f: a[f] for f in fields} for _, a in got] == [
        {"ETag": hashlib.md5(body).hexdigest(), "StorageClass": "STANDARD", "ObjectSize": 1000}
    ] * 2
    sizes = _on_both(
        twin,
        lambda c, b: c.get_object_attributes(
            Bucket=b, Key=twin.key("attrs.bin"), ObjectAttributes=["ObjectSize"]
        ),
    )
    assert all(set(a) - {"ResponseMetadata", "LastModified"} == {"ObjectSize"} for a in sizes)
    missing = _on_both(
        twin,
        lambda c, b: outcome(
            lambda: c.get_object_attributes(Bucket=b, Key=twin.key("nope"), ObjectAttributes=asked)
        ),
    )
    assert missing[0] == missing[1] == ("error", ("NoSuchKey", 404))


SYSTEM = {
    "CacheControl": "max-age=3600",
    "ContentDisposition": 'attachment; filename="report.csv"',
    "ContentEncoding": "gzip",
    "ContentLanguage": "en-GB",
    "Expires": datetime(2031, 1, 2, 3, 4, 5, tzinfo=UTC),
}


def _system(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: answer.get(k) for k in SYSTEM}


def test_system_headers_are_kept_as_s3_keeps_them(twin: Twin, engine: Graveler):
    """Cache-Control, Content-Disposition, Content-Encoding, Content-Language and Expires
    are kept with the object and answer GET and HEAD; a COPY keeps them, a REPLACE takes
    the request's; a multipart upload keeps those it was created with. They never show up
    as user metadata (they are kept as ``s3:NAME`` in the entry's metadata)."""
    _put(twin, "sys.csv.gz", Metadata={"owner": "etl"}, **SYSTEM)
    seen = []
    for client, bucket in twin.both():
        key = twin.key("sys.csv.gz")
        got = client.get_object(Bucket=bucket, Key=key)
        head = client.head_object(Bucket=bucket, Key=key)
        source = {"Bucket": bucket, "Key": key}
        client.copy_object(Bucket=bucket, Key=twin.key("kept"), CopySource=source)
        client.copy_object(
            Bucket=bucket,
            Key=twin.key("replaced"),
            CopySource=source,
            MetadataDirective="REPLACE",
            CacheControl="no-cache",
        )
        kept = client.head_object(Bucket=bucket, Key=twin.key("kept"))
        replaced = client.head_object(Bucket=bucket, Key=twin.key("replaced"))
        upload = client.create_multipart_upload(
            Bucket=bucket, Key=twin.key("mp"), ContentLanguage="fr"
        )["UploadId"]
        part = client.upload_part(
            Bucket=bucket, Key=twin.key("mp"), UploadId=upload, PartNumber=1, Body=b"x"
        )
        client.complete_multipart_upload(
            Bucket=bucket,
            Key=twin.key("mp"),
            UploadId=upload,
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]},
        )
        multi = client.head_object(Bucket=bucket, Key=twin.key("mp"))
        seen.append(
            [
                _system(got),
                _system(head),
                got["Metadata"],
                _system(kept),
                _system(replaced),
                _system(multi),
            ]
        )
    assert seen[0] == seen[1]
    assert seen[0][0] == seen[0][1] == SYSTEM and seen[0][2] == {"owner": "etl"}
    assert seen[0][3] == SYSTEM
    assert seen[0][4] == {**dict.fromkeys(SYSTEM), "CacheControl": "no-cache"}
    assert seen[0][5] == {**dict.fromkeys(SYSTEM), "ContentLanguage": "fr"}
    entry = engine.repository("lake").stat(twin.branch, "sys.csv.gz")
    assert entry.metadata == {
        "owner": "etl",
        "s3:cache-control": "max-age=3600",
        "s3:content-disposition": 'attachment; filename="report.csv"',
        "s3:content-encoding": "gzip",
        "s3:content-language": "en-GB",
        "s3:expires": "Thu, 02 Jan 2031 03:04:05 GMT",
    }


@pytest.mark.parametrize(
    ("sent", "kept", "moto_kept"),
    [
        ("deflate, gzip", "deflate, gzip", "deflate, gzip"),
        ("gzip, aws-chunked", "gzip", "gzip, aws-chunked"),  # MOTO_DEVIATES: keeps it last
        ("aws-chunked, deflate, gzip", "deflate, gzip", "deflate, gzip"),
        ("aws-chunked", None, None),
    ],
)
def test_aws_chunked_is_not_kept_as_a_content_encoding(
    twin: Twin, sent: str, kept: str | None, moto_kept: str | None
):
    """``aws-chunked`` is how the body travelled, not how the object is encoded: S3 stores
    the object without it (AWS's chunked-upload documentation)."""
    _put(twin, "enc", b"x", ContentEncoding=sent)
    heads = _on_both(twin, lambda c, b: c.head_object(Bucket=b, Key=twin.key("enc")))
    assert [h.get("ContentEncoding") for h in heads] == [kept, moto_kept]


def test_non_ascii_metadata_is_signed_and_kept(twin: Twin):
    """botocore sends a non-ASCII header value as UTF-8 and signs its text: the signature
    checks out (it did not: the gateway read the bytes as latin-1), and the value comes back
    as it was sent."""
    value = "Hello World\xe9"

    def set_metadata(params: dict[str, Any], **_: Any) -> None:
        params["headers"]["x-amz-meta-meta1"] = value

    got = []
    for client, bucket in twin.both():
        client.meta.events.register("before-call.s3.PutObject", set_metadata)
        try:
            client.put_object(Bucket=bucket, Key=twin.key("unicode-meta"), Body=b"bar")
        finally:
            client.meta.events.unregister("before-call.s3.PutObject", set_metadata)
        got.append(client.get_object(Bucket=bucket, Key=twin.key("unicode-meta"))["Metadata"])
    assert got[0] == {"meta1": value}  # as ceph's s3-tests expect of S3
    # MOTO_DEVIATES: moto keeps the UTF-8 bytes read as latin-1.
    assert got[1] == {"meta1": value.encode().decode("latin-1")}


@pytest.mark.parametrize("recorded", ["", "abc", "zz" * 32, "ab" * 20])
def test_no_checksum_header_for_an_entry_without_a_sha256(recorded: str):
    entry = ObjectEntry("k", "data/x", 1, recorded, datetime.now(UTC))
    assert checksum_headers(entry) == {}
    sound = ObjectEntry("k", "data/x", 1, hashlib.sha256(b"x").hexdigest(), datetime.now(UTC))
    want = base64.b64encode(hashlib.sha256(b"x").digest()).decode()
    assert checksum_headers(sound)["x-amz-checksum-sha256"] == want


def _raw_get(gateway: Gateway, key: str) -> dict[str, str]:
    """The headers of a presigned GET sent without ``x-amz-checksum-mode``."""
    client = gateway.client(signature_version="s3v4")
    url = client.generate_presigned_url("get_object", Params={"Bucket": "lake", "Key": key})
    with urllib.request.urlopen(url) as answer:
        answer.read()
        return {k.lower(): v for k, v in answer.headers.items()}


def test_copy_agrees_and_shares_bytes(twin: Twin, engine: Graveler):
    _put(twin, "src.txt", ContentType="text/plain", Metadata={"a": "1"})
    for directive, extra in (
        ("COPY", {}),
        ("REPLACE", {"Metadata": {"b": "2"}, "ContentType": "text/x"}),
    ):
        copied = _on_both(
            twin,
            lambda c, b, d=directive, e=extra: outcome(
                lambda: c.copy_object(
                    Bucket=b,
                    Key=twin.key(f"dst-{d}"),
                    CopySource={"Bucket": b, "Key": twin.key("src.txt")},
                    MetadataDirective=d,
                    **e,
                )["CopyObjectResult"]["ETag"]
            ),
        )
        assert copied[0] == copied[1] and copied[0][0] == "ok"
        got = _on_both(twin, lambda c, b, d=directive: _get(c, b, twin.key(f"dst-{d}")))
        assert got[0] == got[1]
    onto_itself = _on_both(
        twin,
        lambda c, b: outcome(
            lambda: c.copy_object(
                Bucket=b,
                Key=twin.key("src.txt"),
                CopySource={"Bucket": b, "Key": twin.key("src.txt")},
            )
        ),
    )
    assert onto_itself[0] == onto_itself[1] == ("error", ("InvalidRequest", 400))
    repo = engine.repository("lake")
    copied_entry = repo.stat(twin.branch, "dst-COPY")
    assert copied_entry.physical_address == repo.stat(twin.branch, "src.txt").physical_address


def test_copy_across_branches(twin: Twin, engine: Graveler, branch: str):
    other = f"{branch}-x"
    engine.repository("lake").create_branch(other, "main")
    twin.gv.put_object(Bucket="lake", Key=twin.key("s.bin"), Body=BODY)
    twin.gv.copy_object(Bucket="lake", Key=f"{other}/t.bin", CopySource=f"lake/{twin.key('s.bin')}")
    assert twin.gv.get_object(Bucket="lake", Key=f"{other}/t.bin")["Body"].read() == BODY


def test_deletes_agree(twin: Twin):
    _put(twin, "d/1")
    _put(twin, "d/2")
    gone = _on_both(
        twin,
        lambda c, b: outcome(
            lambda: c.delete_object(Bucket=b, Key=twin.key("d/1"))["ResponseMetadata"][
                "HTTPStatusCode"
            ]
        ),
    )
    assert gone[0] == gone[1] == ("ok", 204)
    absent = _on_both(
        twin,
        lambda c, b: outcome(
            lambda: c.delete_object(Bucket=b, Key=twin.key("never"))["ResponseMetadata"][
                "HTTPStatusCode"
            ]
        ),
    )
    assert absent[0] == absent[1] == ("ok", 204)

    def batch(client: Any, bucket: str, keys: list[str], quiet: bool) -> tuple[str, Any]:
        objects = [{"Key": twin.key(k)} for k in keys]
        return outcome(
            lambda: sorted(
                d["Key"]
                for d in client.delete_objects(
                    Bucket=bucket, Delete={"Objects": objects, "Quiet": quiet}
                ).get("Deleted", [])
            )
        )

    loud = _on_both(twin, lambda c, b: batch(c, b, ["d/2", "zz"], False))
    assert loud[0] == loud[1] == ("ok", [twin.key("d/2"), twin.key("zz")])
    # Quiet mode lists only errors. MOTO_DEVIATES: it lists the deleted keys too.
    quiet = _on_both(twin, lambda c, b: batch(c, b, ["d/2"], True))
    assert quiet[0] == ("ok", []) and quiet[1] == ("ok", [twin.key("d/2")])
    left = _on_both(twin, lambda c, b: _get(c, b, twin.key("d/2")))
    assert left[0] == left[1] == ("error", ("NoSuchKey", 404))
