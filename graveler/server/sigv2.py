"""AWS Signature Version 2, as S3 checks it: ``Authorization: AWS KEY:SIGNATURE`` or a
presigned URL's ``AWSAccessKeyId``, ``Expires`` and ``Signature``.

The string signed is the method, ``Content-MD5``, ``Content-Type``, the date (``Date``, or
a presigned URL's ``Expires``), the ``x-amz-*`` headers (lower-case, sorted, values joined
with commas) and the resource: the path as sent (``/BUCKET`` in front of it for a
virtual-host request) with the sub-resources of :data:`SUB_RESOURCES` in its query, sorted
(one with an empty value, ``?tagging=``, as its bare name: ``?tagging``).
The signature is its HMAC-SHA1 under the secret, in base64. The time checks are Signature
Version 4's (:mod:`graveler.server.sigv4`): a request at most 15 minutes from the server's
clock, a presigned URL used before it expires and valid for at most 7 days. Refusals are
:class:`~graveler.server.sigv4.SignatureError` with S3's codes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import unquote

from graveler.server.sigv4 import (
    MAX_PRESIGN_SECONDS,
    MAX_SKEW,
    Request,
    SignatureError,
    header_text,
)

#: Query parameters that are part of the signed resource (the others are not signed).
SUB_RESOURCES = frozenset(
    {
        "accelerate",
        "acl",
        "analytics",
        "cors",
        "defaultObjectAcl",
        "delete",
        "inventory",
        "lifecycle",
        "location",
        "logging",
        "metrics",
        "notification",
        "object-lock",
        "partNumber",
        "policy",
        "replication",
        "requestPayment",
        "response-cache-control",
        "response-content-disposition",
        "response-content-encoding",
        "response-content-language",
        "response-content-type",
        "response-expires",
        "restore",
        "select",
        "select-type",
        "storageClass",
        "tagging",
        "torrent",
        "uploadId",
        "uploads",
        "versionId",
        "versioning",
        "versions",
        "website",
    }
)
PRESIGNED = ("AWSAccessKeyId", "Signature", "Expires")


@dataclass(frozen=True)
class SignatureV2:
    """A request's Version 2 signature as given; ``expires`` (epoch seconds) when
    presigned."""

    access_key_id: str
    signature: str
    expires: int | None = None


def parse(request: Request, query: dict[str, str]) -> SignatureV2 | None:
    """The Version 2 signature of ``request`` (``query``: its decoded parameters), or None
    when it carries none. SignatureError when one is given but malformed."""
    header = request.header("authorization")
    if header is not None:
        if not header.startswith("AWS "):
            return None
        key_id, colon, signature = header[4:].strip().rpartition(":")
        if not colon or not key_id or not signature:
            raise SignatureError(
                "AuthorizationHeaderMalformed", "expected 'AWS ACCESS_KEY_ID:SIGNATURE'", 400
            )
        return SignatureV2(key_id, signature)
    if "AWSAccessKeyId" not in query:
        return None
    try:
        expires = int(query["Expires"])
        return SignatureV2(query["AWSAccessKeyId"], query["Signature"], expires)
    except (KeyError, ValueError):
        raise SignatureError(
            "AuthorizationQueryParametersError",
            "a presigned URL of Signature Version 2 needs AWSAccessKeyId, Expires (a number) "
            "and Signature",
            400,
        ) from None


def verify(
    request: Request,
    signature: SignatureV2,
    secret: str,
    *,
    bucket_prefix: str = "",
    now: float | None = None,
) -> None:
    """Check ``signature`` against ``request`` signed with ``secret``; ``bucket_prefix`` is
    ``/BUCKET`` for a virtual-host request. SignatureError when it does not match or is out
    of its time window."""
    _check_time(request, signature, time.time() if now is None else now)
    given = signature.signature.encode()
    matched = False
    for text in strings_to_sign(request, signature, bucket_prefix):
        digest = hmac.new(secret.encode(), text.encode(), hashlib.sha1).digest()
        matched |= hmac.compare_digest(base64.b64encode(digest), given)
    if not matched:
        raise SignatureError(
            "SignatureDoesNotMatch",
            "the request signature we calculated does not match the signature you provided",
        )


def strings_to_sign(request: Request, signature: SignatureV2, bucket_prefix: str) -> list[str]:
    """What a client may have signed: the ``x-amz-*`` and content headers as sent, and for a
    presigned URL also those a signer moved into its query (botocore does)."""
    presigned = signature.expires is not None
    date = str(signature.expires) if presigned else (request.header("date") or "")
    forms = []
    for resource in canonical_resources(request, bucket_prefix):
        for with_query in (False, True) if presigned else (False,):
            headers = _headers(request, with_query)
            amz = "".join(f"{n}:{v}\n" for n, v in sorted(headers.items()) if _amz(n))
            standard = [headers.get("content-md5", ""), headers.get("content-type", ""), date]
            forms.append("\n".join([request.method, *standard, amz + resource]))
    return forms


def canonical_resources(request: Request, bucket_prefix: str = "") -> list[str]:
    """The resource as signed: ``bucket_prefix`` and the path as sent, then the signed
    sub-resources of the query, sorted by name (values decoded). A bucket's resource ends
    with ``/`` (``/BUCKET/``), as AWS defines it, though the path may not (path-style
    ``/BUCKET?list-type=2``): both are tried then."""
    path = bucket_prefix + (request.raw_path.split(b"?", 1)[0].decode("latin-1") or "/")
    paths = [path]
    if path.count("/") == 1 and path != "/":
        paths.insert(0, path + "/")
    query = _sub_resources(request)
    return [p + query for p in paths]


def _sub_resources(request: Request) -> str:
    pairs = []
    for part in request.query_string.decode("latin-1").split("&"):
        name, _, value = part.partition("=")
        if name in SUB_RESOURCES:
            pairs.append((name, f"{name}={unquote(value)}" if value else name))
    if not pairs:
        return ""
    return "?" + "&".join(text for _, text in sorted(pairs, key=lambda p: p[0]))


def _headers(request: Request, with_query: bool) -> dict[str, str]:
    values: dict[str, list[str]] = {}
    for raw_name, raw_value in request.headers:
        text = raw_name.decode("latin-1")
        if _amz(text) or text in ("content-md5", "content-type"):
            values.setdefault(text, []).append(header_text(raw_value).strip())
    found = {name: ",".join(texts) for name, texts in values.items()}
    if with_query:
        for part in request.query_string.decode("latin-1").split("&"):
            name, _, value = part.partition("=")
            lower = unquote(name).lower()
            if _amz(lower) or lower in ("content-md5", "content-type"):
                found.setdefault(lower, unquote(value).strip())
    return found


def _amz(name: str) -> bool:
    return name.startswith("x-amz-")


def _check_time(request: Request, signature: SignatureV2, now: float) -> None:
    if signature.expires is not None:
        if now > signature.expires:
            raise SignatureError("AccessDenied", "Request has expired")
        if signature.expires - now > MAX_PRESIGN_SECONDS:
            raise SignatureError(
                "AuthorizationQueryParametersError",
                f"a presigned URL may be valid for at most {MAX_PRESIGN_SECONDS} seconds",
                400,
            )
        return
    text = request.header("x-amz-date") or request.header("date")
    if not text:
        raise SignatureError("AccessDenied", "the request has no Date or x-amz-date")
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        raise SignatureError("AccessDenied", f"malformed date {text!r:.40}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if abs(datetime.fromtimestamp(now, UTC) - when) > MAX_SKEW:
        raise SignatureError(
            "RequestTimeTooSkewed",
            "the difference between the request time and the server's time is too large",
        )
