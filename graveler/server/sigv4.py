"""AWS Signature Version 4, as S3 checks it: in the ``Authorization`` header or in a
presigned URL's query.

:func:`parse` reads a request's signature (None when the request carries none);
:func:`verify` rebuilds the canonical request, derives the signing key from the access key's
secret and compares signatures in constant time. It also enforces what S3 does around the
signature: the credential scope's date must be the request's, the request's time may be at
most 15 minutes from the server's (header form), and a presigned URL must not have expired
(at most 7 days). Refusals are :class:`SignatureError` with the S3 error code that fits.

The canonical URI and query are rebuilt from the request as sent, decoded and encoded again
with AWS's rules (unreserved characters as they are, everything else ``%XX``), so they match
what an SDK signed whichever equivalent spelling reached the server.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, unquote_to_bytes

from graveler.core.errors import AuthenticationFailed

ALGORITHM = "AWS4-HMAC-SHA256"
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
MAX_SKEW = timedelta(minutes=15)
MAX_PRESIGN_SECONDS = 7 * 24 * 3600
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_AMZ_DATE = "%Y%m%dT%H%M%SZ"
_CREDENTIAL = re.compile(r"^([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request$")
_SPACES = re.compile(r"\s+")


class SignatureError(AuthenticationFailed):
    """A refused signature; ``code`` is S3's error code for it, ``status`` its HTTP status."""

    def __init__(self, code: str, message: str, status: int = 403) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


@dataclass(frozen=True)
class Request:
    """What a signature covers: method, path and query as sent, and the headers (lower-case
    names, in order; a name may repeat)."""

    method: str
    raw_path: bytes
    query_string: bytes
    headers: Sequence[tuple[bytes, bytes]]

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)


def header_value(headers: Sequence[tuple[bytes, bytes]], name: str) -> str | None:
    """The values of header ``name`` (lower-case) joined with commas, or None. Bytes are
    read as UTF-8 (what botocore sends and signs for a non-ASCII value), else as latin-1
    (what http.client sends)."""
    key = name.encode()
    values = [header_text(v) for k, v in headers if k == key]
    return ",".join(values) if values else None


def header_text(value: bytes) -> str:
    """A header value's text: UTF-8 when it decodes as such, else latin-1."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


@dataclass(frozen=True)
class Signature:
    """A request's signature as given."""

    access_key_id: str
    scope_date: str
    region: str
    service: str
    amz_date: str
    signed_headers: tuple[str, ...]
    signature: str
    payload_hash: str
    presigned: bool
    expires: int = 0

    @property
    def scope(self) -> str:
        return f"{self.scope_date}/{self.region}/{self.service}/aws4_request"


@dataclass(frozen=True)
class Verified:
    """A checked signature, with what streaming payloads (``aws-chunked``) chain on."""

    signature: Signature
    signing_key: bytes


def parse(request: Request, query: dict[str, str]) -> Signature | None:
    """The signature of ``request`` (``query``: its decoded parameters), or None when it has
    none. SignatureError when one is given but malformed."""
    header = request.header("authorization")
    if header is not None:
        return _from_header(request, header)
    if "X-Amz-Algorithm" in query or "X-Amz-Signature" in query:
        return _from_query(query)
    return None


def verify(
    request: Request,
    signature: Signature,
    secret: str,
    *,
    service: str = "s3",
    now: datetime | None = None,
) -> Verified:
    """Check ``signature`` against ``request`` signed with ``secret``; SignatureError when it
    does not match or is out of its time window."""
    if signature.service != service:
        raise SignatureError(
            "AuthorizationHeaderMalformed", f"credential scope names service {signature.service!r}"
        )
    _check_time(signature, now or datetime.now(UTC))
    key = signing_key(secret, signature.scope_date, signature.region, signature.service)
    given = signature.signature.lower()
    matched = False
    for canonical in canonical_requests(request, signature):
        digest = hashlib.sha256(canonical.encode()).hexdigest()
        to_sign = f"{ALGORITHM}\n{signature.amz_date}\n{signature.scope}\n{digest}"
        expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        matched |= hmac.compare_digest(expected, given)
    if not matched:
        raise SignatureError(
            "SignatureDoesNotMatch",
            "the request signature we calculated does not match the signature you provided",
        )
    return Verified(signature, key)


@functools.lru_cache(maxsize=1024)
def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    """The derived key of ``secret`` for one day, region and service (cached)."""
    key = _hmac(("AWS4" + secret).encode(), date)
    key = _hmac(key, region)
    key = _hmac(key, service)
    return _hmac(key, "aws4_request")


def canonical_requests(request: Request, signature: Signature) -> list[str]:
    """The canonical requests a client may have signed: path and query as sent (what
    botocore signs for S3: it does not encode them again), and both re-encoded with AWS's
    rules (what SDKs that build the canonical form themselves sign)."""
    headers = "".join(
        f"{name}:{_header_value(request, name)}\n" for name in signature.signed_headers
    )
    tail = [headers, ";".join(signature.signed_headers), signature.payload_hash]
    forms: list[str] = []
    for normalise in (False, True):
        uri = canonical_uri(request.raw_path, normalise)
        query = canonical_query(request.query_string, signature.presigned, normalise)
        form = "\n".join([request.method, uri, query, *tail])
        if form not in forms:
            forms.append(form)
    return forms


def canonical_uri(raw_path: bytes, normalise: bool = True) -> str:
    if not normalise:
        return raw_path.decode("latin-1") or "/"
    return quote(unquote_to_bytes(raw_path), safe="/~") or "/"


def canonical_query(query_string: bytes, presigned: bool, normalise: bool = True) -> str:
    pairs = []
    for part in query_string.split(b"&"):
        if not part:
            continue
        name, _, value = part.partition(b"=")
        if normalise:
            pairs.append((_encode(unquote_to_bytes(name)), _encode(unquote_to_bytes(value))))
        else:
            pairs.append((name.decode("latin-1"), value.decode("latin-1")))
    if presigned:
        pairs = [(n, v) for n, v in pairs if n != "X-Amz-Signature"]
    return "&".join(f"{n}={v}" for n, v in sorted(pairs))


def chunk_signer(verified: Verified) -> Callable[[str, str, str], str]:
    """``sign(previous signature, kind, payload digest)``: the signature of one chunk (kind
    ``AWS4-HMAC-SHA256-PAYLOAD``) or of the trailer (``AWS4-HMAC-SHA256-TRAILER``) of a
    streaming upload, chained on the previous one."""
    sig = verified.signature

    def sign(previous: str, kind: str, digest: str) -> str:
        if kind.endswith("PAYLOAD"):
            text = f"{kind}\n{sig.amz_date}\n{sig.scope}\n{previous}\n{EMPTY_SHA256}\n{digest}"
        else:
            text = f"{kind}\n{sig.amz_date}\n{sig.scope}\n{previous}\n{digest}"
        return hmac.new(verified.signing_key, text.encode(), hashlib.sha256).hexdigest()

    return sign


def _from_header(request: Request, header: str) -> Signature:
    algorithm, _, rest = header.strip().partition(" ")
    if algorithm != ALGORITHM:
        raise SignatureError(
            "AuthorizationHeaderMalformed",
            f"unsupported authorization {algorithm!r:.40}: this endpoint takes AWS Signature "
            "Version 4 (AWS4-HMAC-SHA256) and Version 2 (AWS)",
            400,
        )
    fields = {}
    for item in rest.split(","):
        name, _, value = item.strip().partition("=")
        fields[name] = value
    try:
        credential = fields["Credential"]
        signed = fields["SignedHeaders"]
        sig = fields["Signature"]
    except KeyError as exc:
        raise SignatureError(
            "AuthorizationHeaderMalformed", f"the authorization header lacks {exc.args[0]}", 400
        ) from None
    amz_date = request.header("x-amz-date") or _http_date(request.header("date"))
    payload = request.header("x-amz-content-sha256")
    if payload is None:
        raise SignatureError("InvalidRequest", "missing required header x-amz-content-sha256", 400)
    return _signature(credential, amz_date, signed, sig, payload, presigned=False)


def _from_query(query: dict[str, str]) -> Signature:
    try:
        if query["X-Amz-Algorithm"] != ALGORITHM:
            raise SignatureError(
                "AuthorizationQueryParametersError", "X-Amz-Algorithm must be " + ALGORITHM, 400
            )
        expires = int(query["X-Amz-Expires"])
        signature = _signature(
            query["X-Amz-Credential"],
            query["X-Amz-Date"],
            query["X-Amz-SignedHeaders"],
            query["X-Amz-Signature"],
            query.get("X-Amz-Content-Sha256", UNSIGNED_PAYLOAD),
            presigned=True,
        )
    except (KeyError, ValueError) as exc:
        raise SignatureError(
            "AuthorizationQueryParametersError",
            f"a presigned URL needs X-Amz-Algorithm, -Credential, -Date, -Expires, "
            f"-SignedHeaders and -Signature ({exc})",
            400,
        ) from None
    if not 0 < expires <= MAX_PRESIGN_SECONDS:
        raise SignatureError(
            "AuthorizationQueryParametersError",
            f"X-Amz-Expires must be 1 to {MAX_PRESIGN_SECONDS} seconds",
            400,
        )
    return Signature(**{**signature.__dict__, "expires": expires})


def _signature(
    credential: str, amz_date: str | None, signed: str, sig: str, payload: str, *, presigned: bool
) -> Signature:
    match = _CREDENTIAL.match(credential)
    if match is None:
        raise SignatureError(
            "AuthorizationHeaderMalformed", f"malformed credential {credential!r:.80}", 400
        )
    key_id, date, region, service = match.groups()
    if not amz_date:
        raise SignatureError("AccessDenied", "the request has no X-Amz-Date or Date")
    if not amz_date.startswith(date):
        raise SignatureError(
            "AuthorizationHeaderMalformed",
            f"credential date {date} is not the request's date {amz_date[:8]}",
            400,
        )
    names = tuple(n for n in signed.lower().split(";") if n)
    if "host" not in names:
        raise SignatureError("AccessDenied", "the host header must be signed")
    return Signature(key_id, date, region, service, amz_date, names, sig, payload, presigned)


def _check_time(signature: Signature, now: datetime) -> None:
    try:
        when = datetime.strptime(signature.amz_date, _AMZ_DATE).replace(tzinfo=UTC)
    except ValueError:
        raise SignatureError("AccessDenied", f"malformed date {signature.amz_date!r:.40}") from None
    if signature.presigned:
        if now > when + timedelta(seconds=signature.expires):
            raise SignatureError("AccessDenied", "Request has expired")
        if when - now > MAX_SKEW:
            raise SignatureError("AccessDenied", "request is not valid yet")
    elif abs(now - when) > MAX_SKEW:
        raise SignatureError(
            "RequestTimeTooSkewed",
            "the difference between the request time and the server's time is too large",
        )


def _http_date(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        parsed = datetime.strptime(value, "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)
    except ValueError:
        return None
    return parsed.strftime(_AMZ_DATE)


def _header_value(request: Request, name: str) -> str:
    value = request.header(name)
    if value is None:
        raise SignatureError("AccessDenied", f"signed header {name!r:.40} is missing")
    return _SPACES.sub(" ", value.strip())


def _encode(raw: bytes) -> str:
    return quote(raw, safe="-_.~")


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()
