"""Which interface of ``graveler serve`` answers a request: the rules of docs/s3-gateway.md
("Which interface answers"), in order, the first that matches deciding.

1. A request that says it is S3's goes to the S3 gateway: an ``Authorization`` header of
   any AWS kind (``AWS4-HMAC-SHA256 ...``, ``AWS KEY:SIGNATURE``), a presigned query
   (``X-Amz-Signature``, ``X-Amz-Credential``, ``AWSAccessKeyId``...), any ``x-amz-*``
   header, or a ``Host`` under the virtual-host ``--domain``.
2. ``/api/v1`` and below: lakeFS's REST API. ``/iceberg/api`` and below: the Iceberg REST
   catalog. ``/_health``: the health check.
3. A request with an S3 sub-resource in its query (``uploads``, ``list-type``,
   ``versionId``, ``acl``... :data:`S3_QUERY`) or an S3 SDK's ``User-Agent`` goes to the
   S3 gateway.
4. ``GET``, ``HEAD`` and ``POST`` of the web UI's pages (``/``, and paths whose first
   segment is one of :data:`UI_SEGMENTS`) go to the web UI.
5. Everything else goes to the S3 gateway, which answers an unsigned request with S3's
   ``AccessDenied``.

So an S3 request never gets a web page, whatever the UI's routes are; an unsigned one gets
S3's XML error. The rules read the method, path, query names and headers only.
"""

from __future__ import annotations

from typing import Any

S3, API, ICEBERG, UI, HEALTH = "s3", "api", "iceberg", "ui", "health"
API_PREFIX = "/api/v1"
ICEBERG_PREFIX = "/iceberg/api"
HEALTH_PATH = "/_health"
#: First path segments of the web UI's pages ("" is ``/``, the repositories page).
UI_SEGMENTS = frozenset({"", "repos", "runs", "static", "sign-in", "sign-out"})
UI_METHODS = frozenset({"GET", "HEAD", "POST"})
#: Query parameters of a signed or presigned S3 request.
SIGNED_QUERY = frozenset(
    {
        "X-Amz-Algorithm",
        "X-Amz-Credential",
        "X-Amz-Signature",
        "X-Amz-Date",
        "AWSAccessKeyId",
    }
)
#: S3's sub-resources and request parameters that no page of the UI takes.
S3_QUERY = frozenset(
    {
        "accelerate",
        "acl",
        "analytics",
        "attributes",
        "continuation-token",
        "cors",
        "delete",
        "encryption",
        "intelligent-tiering",
        "inventory",
        "legal-hold",
        "lifecycle",
        "list-type",
        "location",
        "logging",
        "metrics",
        "notification",
        "object-lock",
        "ownershipControls",
        "partNumber",
        "policy",
        "publicAccessBlock",
        "replication",
        "requestPayment",
        "restore",
        "retention",
        "select",
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
#: User agents of S3 SDKs and tools (lower case, as they start).
S3_AGENTS = (b"boto3", b"botocore", b"aws-cli", b"aws-sdk", b"aws-crt", b"s3fs", b"hadoop")


def interface_of(scope: dict[str, Any], domain: str | None = None) -> str:
    """:data:`S3`, :data:`API`, :data:`ICEBERG`, :data:`UI` or :data:`HEALTH` for an HTTP
    scope (see the module docstring)."""
    headers = scope.get("headers", [])
    names = query_names(scope.get("query_string", b""))
    if _signed(headers, names, domain):
        return S3
    path = str(scope.get("path", "/"))
    if under(path, API_PREFIX):
        return API
    if under(path, ICEBERG_PREFIX):
        return ICEBERG
    if path == HEALTH_PATH:
        return HEALTH
    if names & S3_QUERY or _s3_agent(headers):
        return S3
    if scope.get("method") in UI_METHODS and _first_segment(path) in UI_SEGMENTS:
        return UI
    return S3


def under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def query_names(query: bytes) -> set[str]:
    return {part.split(b"=", 1)[0].decode("latin-1") for part in query.split(b"&") if part}


def _first_segment(path: str) -> str:
    return path.lstrip("/").split("/", 1)[0]


def _signed(headers: Any, names: set[str], domain: str | None) -> bool:
    if names & SIGNED_QUERY:
        return True
    suffix = b"." + domain.encode() if domain else None
    for name, value in headers:
        if name.startswith(b"x-amz-"):
            return True
        if name == b"authorization" and value[:4] in (b"AWS4", b"AWS "):
            return True
        if suffix and name == b"host" and value.split(b":")[0].endswith(suffix):
            return True
    return False


def _s3_agent(headers: Any) -> bool:
    return any(n == b"user-agent" and v.lower().startswith(S3_AGENTS) for n, v in headers)
