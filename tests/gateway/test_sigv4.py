"""Signature Version 4 as :mod:`graveler.server.sigv4` checks it, against requests signed by
botocore (an independent signer) and against the chunk signatures of AWS's own published
streaming-upload example."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest
from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from graveler.server import sigv4

KEY, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


def _request(method: str, url: str, headers: dict[str, str], body: bytes = b"") -> sigv4.Request:
    parts = urlsplit(url)
    raw = [
        (k.lower().encode(), v.encode() if isinstance(v, str) else v) for k, v in headers.items()
    ]
    raw.append((b"host", parts.netloc.encode()))
    return sigv4.Request(method, parts.path.encode(), parts.query.encode(), raw)


def _query(url: str) -> dict[str, str]:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))


def _signed(method: str, url: str, body: bytes = b"", secret: str = SECRET) -> sigv4.Request:
    aws = AWSRequest(method=method, url=url, data=body)
    aws.headers["x-amz-content-sha256"] = hashlib.sha256(body).hexdigest()
    S3SigV4Auth(Credentials(KEY, secret), "s3", "us-east-1").add_auth(aws)
    return _request(method, url, dict(aws.headers.items()))


PATHS = [
    "/lake/main/plain.csv",
    "/lake/main/with%20space/and%2Bplus.txt",
    "/lake/main/%C3%BCmlaut/%E2%82%AC.bin",
    "/lake/main/a~b/c!d*e(f)'g",
    "/lake?list-type=2&prefix=main%2Fa%20b&delimiter=%2F&encoding-type=url",
    "/lake/main/x?uploadId=abc%2Bdef&partNumber=3",
]


@pytest.mark.parametrize("path", PATHS)
def test_botocore_header_signatures_verify(path: str):
    request = _signed("PUT", "http://127.0.0.1:8000" + path, b"data")
    signature = sigv4.parse(request, _query("http://x" + path))
    assert signature is not None and not signature.presigned
    verified = sigv4.verify(request, signature, SECRET)
    assert verified.signature.access_key_id == KEY


@pytest.mark.parametrize("path", PATHS)
def test_botocore_presigned_urls_verify(path: str):
    aws = AWSRequest(method="GET", url="http://127.0.0.1:8000" + path)
    S3SigV4QueryAuth(Credentials(KEY, SECRET), "s3", "us-east-1", expires=60).add_auth(aws)
    request = _request("GET", aws.url, {})
    signature = sigv4.parse(request, _query(aws.url))
    assert signature is not None and signature.presigned
    sigv4.verify(request, signature, SECRET)


def test_the_check_fails_for_a_wrong_secret_or_a_changed_request():
    request = _signed("GET", "http://127.0.0.1:8000/lake/main/a.csv")
    signature = sigv4.parse(request, {})
    assert signature is not None
    sigv4.verify(request, signature, SECRET)  # the control: it passes as signed
    with pytest.raises(sigv4.SignatureError) as wrong:
        sigv4.verify(request, signature, SECRET[:-1] + "x")
    assert wrong.value.code == "SignatureDoesNotMatch"
    changed = sigv4.Request("GET", b"/lake/main/b.csv", b"", request.headers)
    with pytest.raises(sigv4.SignatureError):
        sigv4.verify(changed, signature, SECRET)
    other_method = sigv4.Request("DELETE", request.raw_path, b"", request.headers)
    with pytest.raises(sigv4.SignatureError):
        sigv4.verify(other_method, signature, SECRET)


def test_clock_skew_and_expiry():
    request = _signed("GET", "http://127.0.0.1:8000/lake/main/a.csv")
    signature = sigv4.parse(request, {})
    assert signature is not None
    now = datetime.now(UTC)
    sigv4.verify(request, signature, SECRET, now=now + timedelta(minutes=14))
    with pytest.raises(sigv4.SignatureError) as skewed:
        sigv4.verify(request, signature, SECRET, now=now + timedelta(minutes=16))
    assert skewed.value.code == "RequestTimeTooSkewed"
    aws = AWSRequest(method="GET", url="http://127.0.0.1:8000/lake/main/a.csv")
    S3SigV4QueryAuth(Credentials(KEY, SECRET), "s3", "us-east-1", expires=30).add_auth(aws)
    presigned = _request("GET", aws.url, {})
    sig = sigv4.parse(presigned, _query(aws.url))
    assert sig is not None
    sigv4.verify(presigned, sig, SECRET, now=now + timedelta(seconds=20))
    with pytest.raises(sigv4.SignatureError) as expired:
        sigv4.verify(presigned, sig, SECRET, now=now + timedelta(seconds=40))
    assert expired.value.code == "AccessDenied" and "expired" in str(expired.value)


def test_presigned_expiry_limit():
    query = {
        "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
        "X-Amz-Credential": f"{KEY}/20260101/us-east-1/s3/aws4_request",
        "X-Amz-Date": "20260101T000000Z",
        "X-Amz-Expires": str(8 * 24 * 3600),
        "X-Amz-SignedHeaders": "host",
        "X-Amz-Signature": "0" * 64,
    }
    with pytest.raises(sigv4.SignatureError) as caught:
        sigv4.parse(sigv4.Request("GET", b"/", b"", []), query)
    assert caught.value.code == "AuthorizationQueryParametersError"


def test_aws_published_chunk_signatures():
    """AWS's documentation walks through a streaming PUT of 66,560 bytes of 'a' in 64 KiB
    chunks and prints every signature; the chain must reproduce them."""
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    headers = {
        "x-amz-date": "20130524T000000Z",
        "x-amz-storage-class": "REDUCED_REDUNDANCY",
        "authorization": (
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;"
            "x-amz-decoded-content-length;x-amz-storage-class,Signature="
            "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
        ),
        "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
        "content-encoding": "aws-chunked",
        "x-amz-decoded-content-length": "66560",
        "content-length": "66824",
    }
    raw = [(k.encode(), v.encode()) for k, v in headers.items()] + [(b"host", b"s3.amazonaws.com")]
    request = sigv4.Request("PUT", b"/examplebucket/chunkObject.txt", b"", raw)
    signature = sigv4.parse(request, {})
    assert signature is not None
    when = datetime(2013, 5, 24, tzinfo=UTC)
    verified = sigv4.verify(request, signature, secret, now=when)
    sign = sigv4.chunk_signer(verified)
    chain = [signature.signature]
    for data in (b"a" * 65536, b"a" * 1024, b""):
        chain.append(sign(chain[-1], "AWS4-HMAC-SHA256-PAYLOAD", hashlib.sha256(data).hexdigest()))
    assert chain[1:] == [
        "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
        "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
        "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
    ]
