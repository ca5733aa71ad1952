"""An HTTP request as S3 sees it: bucket (the repository), key (``REF/PATH``), query and
headers, from an ASGI scope."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

from graveler.server.s3.errors import S3Error
from graveler.server.sigv4 import Request as SignedRequest
from graveler.server.sigv4 import header_text, header_value


@dataclass
class S3Request:
    method: str
    raw_path: bytes
    query_string: bytes
    headers: Sequence[tuple[bytes, bytes]]
    query: dict[str, str]
    bucket: str | None
    key: str | None
    #: Set by authentication: the access key ID, for logs and multipart initiators.
    caller: str = ""
    request_id: str = field(default="")
    #: Whether the bucket came from the Host header (virtual-host style).
    virtual_host: bool = False

    @classmethod
    def from_scope(cls, scope: dict[str, Any], domain: str | None = None) -> S3Request:
        raw_path = scope.get("raw_path") or scope["path"].encode()
        query_string = scope.get("query_string", b"")
        headers = [(k.lower(), v) for k, v in scope["headers"]]
        try:
            path = unquote_to_bytes(raw_path.split(b"?", 1)[0]).decode("utf-8")
            query = dict(parse_qsl(query_string.decode("latin-1"), keep_blank_values=True))
            query = {
                k.encode("latin-1").decode("utf-8"): v.encode("latin-1").decode("utf-8")
                for k, v in query.items()
            }
        except UnicodeDecodeError:
            raise S3Error("InvalidURI", "the request URI is not valid UTF-8", 400) from None
        host = _host(headers)
        bucket, key = _address(path, host, domain)
        virtual = bool(domain) and host.endswith(f".{domain}")
        request = cls(scope["method"], raw_path, query_string, headers, query, bucket, key)
        request.virtual_host = virtual
        return request

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)

    def stored_metadata(self) -> dict[str, str]:
        """What an object written by this request keeps besides its bytes and content type:
        its user metadata (:meth:`user_metadata`) and S3's other system headers
        (:data:`SYSTEM_HEADERS`, under ``s3:NAME``; ``aws-chunked``, a transfer encoding,
        is not kept as a content encoding)."""
        found = self.user_metadata()
        for name in SYSTEM_HEADERS:
            value = self.header(name)
            if value is not None and name == "content-encoding":
                value = _without_aws_chunked(value)
            if value:
                found[SYSTEM_PREFIX + name] = value
        return found

    def user_metadata(self) -> dict[str, str]:
        """``x-amz-meta-*`` headers as metadata (names lower-case, prefix removed; values
        decoded as UTF-8 where they are, as S3 keeps what was sent)."""
        found = {}
        for k, v in self.headers:
            if k.startswith(b"x-amz-meta-"):
                name = k[len(b"x-amz-meta-") :].decode("latin-1")
                found[name] = header_text(v)
        return found

    @property
    def signed(self) -> SignedRequest:
        return SignedRequest(self.method, self.raw_path, self.query_string, self.headers)

    @property
    def ref(self) -> str:
        return (self.key or "").split("/", 1)[0]

    @property
    def path(self) -> str:
        parts = (self.key or "").split("/", 1)
        return parts[1] if len(parts) == 2 else ""

    @property
    def resource(self) -> str:
        if self.bucket is None:
            return "/"
        return f"/{self.bucket}/{self.key}" if self.key else f"/{self.bucket}"


def _host(headers: Sequence[tuple[bytes, bytes]]) -> str:
    for k, v in headers:
        if k == b"host":
            return v.decode("latin-1").rsplit(":", 1)[0] if not v.startswith(b"[") else ""
    return ""


def _address(path: str, host: str, domain: str | None) -> tuple[str | None, str | None]:
    """(bucket, key) from a path-style path, or from the host for virtual-host style."""
    if domain and host.endswith("." + domain):
        bucket = host[: -len(domain) - 1]
        return bucket, path[1:] or None
    stripped = path[1:] if path.startswith("/") else path
    if not stripped:
        return None, None
    bucket, _, key = stripped.partition("/")
    return bucket, key or None


#: Headers S3 keeps with an object and answers reads with (besides Content-Type).
SYSTEM_HEADERS = (
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-language",
    "expires",
)
#: Where they live in an entry's metadata (``s3:cache-control``); no ``x-amz-meta-*`` name
#: can hold a colon, so user metadata never collides with them.
SYSTEM_PREFIX = "s3:"


def _without_aws_chunked(encoding: str) -> str:
    """A content encoding as sent, without ``aws-chunked`` (how the body travelled)."""
    codings = [c.strip() for c in encoding.split(",")]
    if "aws-chunked" not in (c.lower() for c in codings):
        return encoding
    return ", ".join(c for c in codings if c and c.lower() != "aws-chunked")
