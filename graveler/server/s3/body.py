"""Request payloads: read from ASGI, decoded, and checked against what the client declared.

* A plain body is read up to its ``Content-Length``.
* ``aws-chunked`` bodies (``x-amz-content-sha256: STREAMING-...``) are decoded as they
  arrive: each chunk's signature is checked against the chain that starts at the request's
  signature (``STREAMING-AWS4-HMAC-SHA256-PAYLOAD``), or the chunks are unsigned
  (``STREAMING-UNSIGNED-PAYLOAD-TRAILER``); trailing checksums (CRC32, CRC32C, SHA-1,
  SHA-256), and the trailer's own signature when signed, are checked at the end.
* ``Content-MD5`` and a hex ``x-amz-content-sha256`` are checked by :meth:`Body.check`
  against the digests the object writer computed, before anything is staged.

A client that goes away mid-body raises :class:`ClientGone`; a body that breaks its framing
or any check raises an :class:`~graveler.server.s3.errors.S3Error`. Either way the caller
discards what it wrote. A body declared larger than S3's 5 GiB limit is refused
(``EntityTooLarge``) before any of it is read, and one that stalls for ``timeout`` seconds
(sending less than its ``Content-Length``, say) ends with S3's ``RequestTimeout``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from graveler.server.s3.errors import S3Error
from graveler.server.s3.request import S3Request
from graveler.server.sigv4 import UNSIGNED_PAYLOAD, Verified, chunk_signer

Receive = Callable[[], Awaitable[dict[str, Any]]]
SIGNED_STREAMING = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
SIGNED_STREAMING_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
UNSIGNED_STREAMING_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
MAX_CHUNK_HEADER = 4096
#: S3's limit for one PUT (larger objects go through multipart uploads).
MAX_PUT_BYTES = 5 << 30


class ClientGone(Exception):
    """The client disconnected before its body was complete."""


class _Checksum:
    """A checksum algorithm of S3's (CRC32, CRC32C, CRC64NVME, SHA-1, SHA-256): its running
    state and its base64 digest. The CRCs other than CRC32 come from awscrt, which the AWS
    SDKs use for them too."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._crc = 0
        self._hash = hashlib.new(name) if name in ("sha1", "sha256") else None
        self._width = 8 if name == "crc64nvme" else 4
        if name == "crc32":
            self._fold: Callable[[bytes, int], int] = zlib.crc32
        elif name in ("crc32c", "crc64nvme"):
            from awscrt import checksums

            self._fold = getattr(checksums, name)
        elif self._hash is None:
            raise S3Error("InvalidRequest", f"checksum algorithm {name!r} is not supported", 400)

    def update(self, data: bytes) -> None:
        if self._hash is not None:
            self._hash.update(data)
        else:
            self._crc = self._fold(data, self._crc)

    def digest(self) -> str:
        if self._hash is not None:
            raw = self._hash.digest()
        else:
            raw = self._crc.to_bytes(self._width, "big")
        return base64.b64encode(raw).decode()


class Body:
    """The decoded payload of one request (see the module docstring)."""

    def __init__(
        self,
        receive: Receive,
        request: S3Request,
        verified: Verified | None,
        *,
        timeout: float = 20.0,
    ) -> None:
        self._receive = receive
        self._timeout = timeout
        self._request = request
        self._verified = verified
        self.payload_hash = request.header("x-amz-content-sha256") or UNSIGNED_PAYLOAD
        self.streaming = self.payload_hash.startswith("STREAMING-")
        self._length = _int_header(request, "content-length")
        self.decoded_length = (
            _int_header(request, "x-amz-decoded-content-length") if self.streaming else self._length
        )
        self._trailer_names = [
            n.strip().lower()
            for n in (request.header("x-amz-trailer") or "").split(",")
            if n.strip()
        ]
        declared = self.decoded_length or 0  # without aws-chunked framing
        if declared > MAX_PUT_BYTES:
            raise _too_large(declared)
        self._checksum = _declared_checksum(request, self._trailer_names)
        #: Checksums to echo in the response (``x-amz-checksum-*`` name -> base64 value).
        self.checksums: dict[str, str] = {}
        self.received = 0
        #: Whether the whole body came in (else an answer must close the connection).
        self.complete = False

    async def chunks(self) -> AsyncIterator[bytes]:
        """The decoded payload, in pieces as they arrive."""
        source = self._raw() if not self.streaming else self._decode_chunked()
        async for piece in source:
            self.received += len(piece)
            if self.received > MAX_PUT_BYTES:
                raise _too_large(self.received)
            if self._checksum is not None:
                self._checksum.update(piece)
            yield piece
        self._finish()

    async def read_all(self, limit: int) -> bytes:
        """The whole payload (small bodies: XML requests); EntityTooLarge past ``limit``."""
        parts = []
        total = 0
        async for piece in self.chunks():
            total += len(piece)
            if total > limit:
                raise S3Error("EntityTooLarge", f"the request body exceeds {limit} bytes", 400)
            parts.append(piece)
        return b"".join(parts)

    def check(self, md5_hex: str | None, sha256_hex: str | None) -> None:
        """Refuse a payload whose MD5 or SHA-256 is not what the client declared."""
        declared_md5 = self._request.header("content-md5")
        if declared_md5 is not None:
            try:
                expected = base64.b64decode(declared_md5, validate=True).hex()
            except ValueError:
                raise S3Error(
                    "InvalidDigest", "the Content-MD5 you specified was invalid", 400
                ) from None
            if md5_hex is not None and expected != md5_hex:
                raise S3Error("BadDigest", "the Content-MD5 you specified did not match", 400)
        declared_sha = None if self.streaming else self.payload_hash.lower()
        checkable = declared_sha not in (None, UNSIGNED_PAYLOAD.lower())
        if checkable and sha256_hex is not None and declared_sha != sha256_hex:
            raise S3Error(
                "XAmzContentSHA256Mismatch",
                "the provided x-amz-content-sha256 does not match what was computed",
                400,
            )

    async def _messages(self) -> AsyncIterator[bytes]:
        while True:
            try:
                message = await asyncio.wait_for(self._receive(), self._timeout)
            except TimeoutError:
                raise S3Error(
                    "RequestTimeout",
                    "your socket connection to the server was not read from or written to "
                    f"within {self._timeout:g} seconds",
                    400,
                ) from None
            if message["type"] == "http.disconnect":
                raise ClientGone()
            data = message.get("body", b"")
            if not message.get("more_body", False):
                self.complete = True
            if data:
                yield data
            if self.complete:
                return

    async def _raw(self) -> AsyncIterator[bytes]:
        seen = 0
        async for data in self._messages():
            seen += len(data)
            yield data
        if self._length is not None and seen != self._length:
            raise S3Error("IncompleteBody", "the body is shorter than its Content-Length", 400)

    async def _decode_chunked(self) -> AsyncIterator[bytes]:
        decoder = _ChunkDecoder(self)
        async for data in self._messages():
            for piece in decoder.feed(data):
                yield piece
        decoder.close()

    def _finish(self) -> None:
        if self.decoded_length is not None and self.received != self.decoded_length:
            raise S3Error(
                "IncompleteBody", "the decoded body is not x-amz-decoded-content-length long", 400
            )
        if self._checksum is not None:
            name = f"x-amz-checksum-{self._checksum.name}"
            declared = self.checksums.get(name) or self._request.header(name)
            if declared is None:
                raise S3Error("InvalidRequest", f"the {name} trailer is missing", 400)
            if declared != self._checksum.digest():
                raise S3Error("BadDigest", f"the {self._checksum.name} checksum did not match", 400)
            self.checksums[name] = declared


class _ChunkDecoder:
    """The ``aws-chunked`` framing as a push parser (bytes in, payload pieces out)."""

    def __init__(self, body: Body) -> None:
        self._body = body
        self._buffer = bytearray()
        self._remaining = -1  # bytes of the current chunk still to come; -1: at a header
        self._signed = body.payload_hash in (SIGNED_STREAMING, SIGNED_STREAMING_TRAILER)
        if self._signed and body._verified is None:
            raise S3Error("AccessDenied", "a signed streaming payload needs a signed request", 403)
        self._sign = chunk_signer(body._verified) if body._verified is not None else None
        self._previous = body._verified.signature.signature if body._verified else ""
        self._claimed = ""
        self._hash = hashlib.sha256()
        self._done = False

    def feed(self, data: bytes) -> list[bytes]:
        self._buffer += data
        out: list[bytes] = []
        while not self._done:
            if self._remaining < 0:
                if not self._read_header():
                    break
            elif self._remaining > 0:
                if not self._buffer:
                    break
                piece = bytes(self._buffer[: self._remaining])
                del self._buffer[: len(piece)]
                self._remaining -= len(piece)
                self._hash.update(piece)
                out.append(piece)
            else:
                if len(self._buffer) < 2:
                    break
                if self._buffer[:2] != b"\r\n":
                    raise _malformed("a chunk does not end with CRLF")
                del self._buffer[:2]
                self._end_chunk()
        if self._done and len(self._buffer) > MAX_CHUNK_HEADER:
            raise _malformed("the trailer is too long")
        return out

    def close(self) -> None:
        if not self._done:
            raise S3Error("IncompleteBody", "the chunked body ended before its last chunk", 400)
        self._read_trailer(bytes(self._buffer))

    def _read_header(self) -> bool:
        end = self._buffer.find(b"\r\n")
        if end < 0:
            if len(self._buffer) > MAX_CHUNK_HEADER:
                raise _malformed("a chunk header is too long")
            return False
        line = bytes(self._buffer[:end]).decode("latin-1")
        del self._buffer[: end + 2]
        size_text, _, extension = line.partition(";")
        try:
            size = int(size_text, 16)
        except ValueError:
            raise _malformed(f"bad chunk size {size_text!r:.20}") from None
        self._claimed = extension.partition("chunk-signature=")[2].strip()
        if self._signed and not self._claimed:
            raise S3Error("SignatureDoesNotMatch", "a chunk lacks its signature", 403)
        self._remaining = size
        if size == 0:
            self._end_chunk()
            self._done = True
        return True

    def _end_chunk(self) -> None:
        if self._signed:
            assert self._sign is not None
            expected = self._sign(
                self._previous, "AWS4-HMAC-SHA256-PAYLOAD", self._hash.hexdigest()
            )
            if expected != self._claimed.lower():
                raise S3Error("SignatureDoesNotMatch", "a chunk signature does not match", 403)
            self._previous = expected
        self._hash = hashlib.sha256()
        self._remaining = -1

    def _read_trailer(self, text: bytes) -> None:
        """Trailer headers after the last chunk: checksums (and the trailer signature)."""
        lines = [line for line in text.decode("latin-1").split("\r\n") if line]
        signature = ""
        canonical = ""
        for line in lines:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "x-amz-trailer-signature":
                signature = value
            else:
                canonical += f"{name}:{value}\n"
                if name.startswith("x-amz-checksum-"):
                    self._body.checksums[name] = value
        if self._body.payload_hash == SIGNED_STREAMING_TRAILER:
            assert self._sign is not None
            digest = hashlib.sha256(canonical.encode()).hexdigest()
            expected = self._sign(self._previous, "AWS4-HMAC-SHA256-TRAILER", digest)
            if expected != signature.lower():
                raise S3Error("SignatureDoesNotMatch", "the trailer signature does not match", 403)


def _declared_checksum(request: S3Request, trailers: list[str]) -> _Checksum | None:
    """The checksum the client declared, in a trailer or a header (or None)."""
    for name in trailers:
        if name.startswith("x-amz-checksum-"):
            return _Checksum(name[len("x-amz-checksum-") :])
    for name in ("crc32", "crc32c", "crc64nvme", "sha1", "sha256"):
        if request.header(f"x-amz-checksum-{name}") is not None:
            return _Checksum(name)
    return None


def _int_header(request: S3Request, name: str) -> int | None:
    value = request.header(name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise S3Error("InvalidArgument", f"{name} must be a number", 400) from None
    if number < 0:
        raise S3Error("InvalidArgument", f"{name} must not be negative", 400)
    return number


def _too_large(size: int) -> S3Error:
    return S3Error(
        "EntityTooLarge",
        "your proposed upload exceeds the maximum allowed size",
        400,
        ProposedSize=str(size),
        MaxSizeAllowed=str(MAX_PUT_BYTES),
    )


def _malformed(message: str) -> S3Error:
    return S3Error("IncompleteBody", f"malformed aws-chunked body: {message}", 400)
