"""An object store over an S3 bucket and key prefix (``s3://bucket/prefix``), via boto3.

This is the only module of graveler that imports boto3 (install ``graveler[s3]``); its
bucket and prefix are checked by :mod:`.s3_location`, its response bodies read by
:mod:`.s3_body`, its streaming writes made by :mod:`.s3_writer`.

Retries: every request goes through botocore's retry machinery
(``Config(retries={"mode": "standard"|"adaptive", "max_attempts": N})``): 5xx responses,
throttling (``SlowDown``, ``Throttling``, ``RequestLimitExceeded``, HTTP 429, ...) and connection
errors are retried with capped exponential backoff and full jitter. Reading a response body is
retried here too (botocore does not): a ``get`` or ``read_range`` whose body breaks off is
re-requested. What escapes after the attempts are exhausted is :class:`StorageError`, whose
message names the bucket and key, the error code and what to check.

Configuration, in order of precedence: constructor arguments, then the environment
(``GRAVELER_S3_ENDPOINT_URL``; ``AWS_REGION`` / ``AWS_DEFAULT_REGION``), then boto3's usual
credential chain (environment, shared config/credentials files, instance metadata).

Keys are stored as ``<prefix>/<key>``; :meth:`S3ObjectStore.list` strips the prefix and skips
S3 keys that are not valid graveler keys (such as ``folder/`` markers made by consoles).
"""

from __future__ import annotations

import functools
import io
import os
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, BinaryIO, Literal, TypeVar, cast

import boto3
from boto3.exceptions import S3UploadFailedError
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from graveler.core.errors import (
    GravelerError,
    InvalidArgument,
    InvalidKey,
    ObjectNotFound,
    StorageError,
)
from graveler.storage.objectstore._io import CHUNK_SIZE, ExactReader, check_range, utc_now
from graveler.storage.objectstore.keys import validate_key, validate_prefix
from graveler.storage.objectstore.port import ObjectInfo
from graveler.storage.objectstore.s3_body import BODY_READ_ATTEMPTS, ResumingBody
from graveler.storage.objectstore.s3_location import check_bucket, normalize_prefix, region_of
from graveler.storage.objectstore.s3_writer import S3ObjectWriter

ENDPOINT_ENV = "GRAVELER_S3_ENDPOINT_URL"
MULTIPART_CHUNK = 8 << 20
#: How often a conditional PutObject that S3 answers with 409 (a concurrent one) is tried.
CONDITIONAL_ATTEMPTS = 4

_NOT_FOUND_CODES = frozenset({"NoSuchKey", "NotFound", "404"})
_AUTH_CODES = frozenset(
    {"AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken"}
)
_T = TypeVar("_T")


def _hint(code: str, status: int | None, attempts: int) -> str:
    """What the operator should check for an S3 error code / HTTP status."""
    if code == "NoSuchBucket":
        return "check that the bucket exists and that the endpoint and region are right"
    if code in _AUTH_CODES:
        return (
            "check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE or the "
            "instance role) and that the bucket policy allows this operation"
        )
    if status is not None and (status >= 500 or status == 429):
        return (
            f"the service kept failing or throttling for {attempts} attempt(s); check the "
            "endpoint's health and request rate, or raise max_attempts"
        )
    return "check the bucket, prefix, endpoint and credentials"


class S3ObjectStore:
    """Objects under ``s3://bucket/prefix``. Implements :class:`ObjectStore`; thread-safe.

    ``max_attempts`` counts every attempt of a request, the first included (botocore's
    ``total_max_attempts``). ``endpoint_url`` (or ``GRAVELER_S3_ENDPOINT_URL``) selects an
    S3-compatible service such as MinIO and switches to path-style addressing. Credentials not
    given here come from boto3's chain; the region defaults to ``AWS_REGION``,
    ``AWS_DEFAULT_REGION``, then us-east-1.
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        session_token: str | None = None,
        max_attempts: int = 8,
        retry_mode: Literal["standard", "adaptive"] = "standard",
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        max_concurrency: int = 4,
    ) -> None:
        self._bucket = check_bucket(bucket)
        self._prefix = normalize_prefix(prefix)
        if max_attempts < 1:
            raise InvalidArgument(f"max_attempts must be at least 1, got {max_attempts}")
        if retry_mode not in ("standard", "adaptive"):
            raise InvalidArgument(f"retry_mode must be 'standard' or 'adaptive': {retry_mode!r}")
        if (access_key_id is None) != (secret_access_key is None):
            raise InvalidArgument("give both access_key_id and secret_access_key, or neither")
        self._endpoint = endpoint_url or os.environ.get(ENDPOINT_ENV) or None
        self._max_attempts = max_attempts
        config = Config(
            retries={"mode": retry_mode, "total_max_attempts": max_attempts},
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            s3={"addressing_style": "path"} if self._endpoint else None,
            signature_version="s3v4",  # presigned URLs too (boto3 presigns with SigV2 else)
            user_agent_extra="graveler",
        )
        session = boto3.session.Session(
            aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
            aws_session_token=session_token,
            region_name=region_of(region),
        )
        self._client: Any = session.client("s3", endpoint_url=self._endpoint, config=config)
        self._transfer = TransferConfig(
            multipart_threshold=MULTIPART_CHUNK,
            multipart_chunksize=MULTIPART_CHUNK,
            max_concurrency=max_concurrency,
        )

    def __repr__(self) -> str:
        return f"S3ObjectStore({self.uri!r}, endpoint_url={self._endpoint!r})"

    @property
    def uri(self) -> str:
        """``s3://bucket`` or ``s3://bucket/prefix`` (no trailing slash)."""
        return f"s3://{self._bucket}/{self._prefix}".rstrip("/")

    @property
    def bucket(self) -> str:
        return self._bucket

    @property
    def prefix(self) -> str:
        """The key prefix inside the bucket: ``""`` or ending with ``/``."""
        return self._prefix

    # --- helpers -------------------------------------------------------------------------------

    def _full_key(self, key: str) -> str:
        return self._prefix + validate_key(key)

    def _error(self, exc: Exception, action: str, key: str | None) -> GravelerError:
        """Translate a boto3/botocore exception into graveler's error tree."""
        where = f"s3://{self._bucket}/{self._prefix}{key if key is not None else ''}"
        if isinstance(exc, ClientError):
            error = exc.response.get("Error", {})
            meta = exc.response.get("ResponseMetadata", {})
            code = str(error.get("Code", ""))
            status = meta.get("HTTPStatusCode")
            if key is not None and code in _NOT_FOUND_CODES:
                return ObjectNotFound(f"no object {key!r} in {self.uri}")
            attempts = int(meta.get("RetryAttempts", 0)) + 1
            return StorageError(
                f"{action} {where} failed with {code or status} "
                f"({error.get('Message', 'no message')}) after {attempts} attempt(s); "
                + _hint(code, status, attempts)
            )
        return StorageError(
            f"{action} {where} failed: {exc}; check the endpoint "
            f"({self._endpoint or 'AWS default: no endpoint_url or ' + ENDPOINT_ENV + ' given'}), "
            "the network and the credentials "
            f"(gave up after up to {self._max_attempts} attempt(s))"
        )

    @property
    def client(self) -> Any:
        """The boto3 S3 client (for :mod:`graveler.storage.objectstore.s3_writer`)."""
        return self._client

    def call(self, action: str, key: str | None, fn: Callable[[], _T]) -> _T:
        """Run one boto3 call (botocore retries inside) and translate what escapes."""
        try:
            return fn()
        except (ClientError, BotoCoreError, S3UploadFailedError) as exc:
            raise self._error(exc, action, key) from exc

    def _fetch(self, key: str, **params: str) -> bytes:
        """GET ``key`` (with optional Range) and read its body, re-requesting a broken body."""
        full = self._full_key(key)
        for attempt in range(1, BODY_READ_ATTEMPTS + 1):
            response = self.call(
                "reading",
                key,
                lambda: self._client.get_object(Bucket=self._bucket, Key=full, **params),
            )
            body = response["Body"]
            try:
                return cast(bytes, body.read())
            except BotoCoreError as exc:
                if attempt == BODY_READ_ATTEMPTS:
                    raise self._error(exc, "reading the body of", key) from exc
                time.sleep(0.05 * 2**attempt)
            finally:
                body.close()
        raise AssertionError("unreachable")  # pragma: no cover

    # --- the ObjectStore protocol --------------------------------------------------------------

    def put(self, key: str, data: bytes | BinaryIO) -> ObjectInfo:
        """Create or replace ``key``. Small ``bytes`` go in one PutObject; file-likes and big
        ``bytes`` go through ``upload_fileobj`` (multipart above 8 MiB, streamed part by part,
        the multipart upload aborted on failure). S3 publishes an object only when the upload
        completes, so readers never see a prefix. The returned mtime is the client's clock at
        completion; :meth:`stat` reports S3's LastModified."""
        full = self._full_key(key)
        if isinstance(data, bytes | bytearray | memoryview):
            payload = bytes(data)
            if len(payload) < MULTIPART_CHUNK:
                self.call(
                    "writing",
                    key,
                    lambda: self._client.put_object(Bucket=self._bucket, Key=full, Body=payload),
                )
                return ObjectInfo(key, len(payload), utc_now())
            data = io.BytesIO(payload)
        reader = ExactReader(data)
        self.call(
            "writing",
            key,
            lambda: self._client.upload_fileobj(reader, self._bucket, full, Config=self._transfer),
        )
        return ObjectInfo(key, reader.size, utc_now())

    def open_writer(self, key: str, *, fresh: bool = False, durable: bool = True) -> S3ObjectWriter:
        """A writer of ``key``: one PutObject for a small object, a multipart upload of 8 MiB
        parts sent as they fill for a large one (see
        :mod:`graveler.storage.objectstore.s3_writer`)."""
        return S3ObjectWriter(self, key, self._full_key(key), MULTIPART_CHUNK)

    def sync(self, keys: Iterable[str]) -> None:
        """Nothing to do: every commit is already durable (as durable as this store gets)."""
        return None

    def put_if_absent(self, key: str, data: bytes) -> bool:
        """PutObject with ``If-None-Match: *`` (S3 conditional writes): S3 refuses with 412
        when the key exists. A 409 (a concurrent conditional write still in flight) is
        retried a few times. Services that ignore the header would overwrite: use S3 or a
        compatible store that implements conditional writes."""
        full = self._full_key(key)
        payload = bytes(data)
        for attempt in range(1, CONDITIONAL_ATTEMPTS + 1):
            try:
                self._client.put_object(
                    Bucket=self._bucket, Key=full, Body=payload, IfNoneMatch="*"
                )
                return True
            except ClientError as exc:
                code = _code(exc)
                if code == "PreconditionFailed":
                    return False
                if code != "ConditionalRequestConflict" or attempt == CONDITIONAL_ATTEMPTS:
                    raise self._error(exc, "creating", key) from exc
            except BotoCoreError as exc:
                raise self._error(exc, "creating", key) from exc
            time.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def get(self, key: str) -> bytes:
        """The whole object; ObjectNotFound if missing."""
        return self._fetch(key)

    def open(self, key: str) -> BinaryIO:
        """A buffered reader streaming the object's body; ObjectNotFound if missing. A body that
        breaks off is resumed where it broke (a ranged GET of the same ETag)."""
        full = self._full_key(key)
        response = self.call(
            "opening", key, lambda: self._client.get_object(Bucket=self._bucket, Key=full)
        )
        size, etag = int(response["ContentLength"]), response.get("ETag")
        reopen = functools.partial(self._body_from, key, size, etag)
        raw = ResumingBody(response["Body"], reopen, f"s3://{self._bucket}/{full}")
        return cast(BinaryIO, io.BufferedReader(raw, buffer_size=CHUNK_SIZE))

    def _body_from(self, key: str, size: int, etag: str | None, offset: int) -> Any:
        """The body of ``key`` from ``offset`` on (empty at or past ``size``), refused by S3
        (412, a StorageError) if the object no longer has ``etag``."""
        if offset >= size:
            return io.BytesIO(b"")
        params = {"Range": f"bytes={offset}-"}
        if etag:
            params["IfMatch"] = etag
        full = self._full_key(key)
        response = self.call(
            "resuming",
            key,
            lambda: self._client.get_object(Bucket=self._bucket, Key=full, **params),
        )
        return response["Body"]

    def read_range(self, key: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset`` (HTTP Range); empty past the end."""
        check_range(offset, length)
        if length == 0:
            self.stat(key)
            return b""
        try:
            return self._fetch(key, Range=f"bytes={offset}-{offset + length - 1}")
        except StorageError as exc:
            cause = exc.__cause__
            if isinstance(cause, ClientError) and _code(cause) == "InvalidRange":
                return b""  # 416: the object exists but starts before offset
            raise

    def stat(self, key: str) -> ObjectInfo:
        """Size and LastModified (UTC) via HeadObject; ObjectNotFound if missing."""
        full = self._full_key(key)
        head = self.call(
            "inspecting", key, lambda: self._client.head_object(Bucket=self._bucket, Key=full)
        )
        return ObjectInfo(key, int(head["ContentLength"]), _utc(head["LastModified"]))

    def exists(self, key: str) -> bool:
        try:
            self.stat(key)
        except ObjectNotFound:
            return False
        return True

    def delete(self, key: str) -> None:
        """DeleteObject; S3 itself treats a missing key as success."""
        full = self._full_key(key)
        self.call(
            "deleting", key, lambda: self._client.delete_object(Bucket=self._bucket, Key=full)
        )

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        """ListObjectsV2 pages under ``prefix`` (S3 returns keys sorted by UTF-8 bytes, which is
        code point order, the same as Python's string order)."""
        validate_prefix(prefix)
        return self._iter_list(prefix)

    def _iter_list(self, prefix: str) -> Iterator[ObjectInfo]:
        paginator = self._client.get_paginator("list_objects_v2")
        pages = paginator.paginate(Bucket=self._bucket, Prefix=self._prefix + prefix)
        try:
            for page in pages:
                for item in page.get("Contents", []):
                    info = self._listed(item)
                    if info is not None:
                        yield info
        except (ClientError, BotoCoreError) as exc:
            raise self._error(exc, "listing", prefix or None) from exc

    def _listed(self, item: dict[str, Any]) -> ObjectInfo | None:
        key = str(item["Key"])[len(self._prefix) :]
        try:
            validate_key(key)
        except InvalidKey:
            return None
        return ObjectInfo(key, int(item["Size"]), _utc(item["LastModified"]))

    def local_path(self, key: str) -> str | None:
        """Always None: S3 objects are not on local disk."""
        validate_key(key)
        return None

    # --- presigned access (lakeFS's direct reads and writes) -------------------------------------

    def presign(self, key: str, *, write: bool = False, expires: int = 900) -> str:
        """A URL that GETs (or with ``write``, PUTs) ``key`` for ``expires`` seconds without
        credentials, signed with this store's."""
        method = "put_object" if write else "get_object"
        params = {"Bucket": self._bucket, "Key": self._full_key(key)}
        return cast(
            str,
            self.call(
                "presigning",
                key,
                lambda: self._client.generate_presigned_url(
                    method, Params=params, ExpiresIn=expires
                ),
            ),
        )

    def create_multipart(self, key: str) -> str:
        """Start a multipart upload of ``key`` whose parts clients send themselves (to
        :meth:`presign_part` URLs); its upload ID."""
        full = self._full_key(key)
        response = self.call(
            "starting a multipart upload of",
            key,
            lambda: self._client.create_multipart_upload(Bucket=self._bucket, Key=full),
        )
        return str(response["UploadId"])

    def presign_part(self, key: str, upload_id: str, part: int, *, expires: int = 900) -> str:
        """A URL that PUTs part ``part`` of the multipart upload ``upload_id`` of ``key``."""
        params = {
            "Bucket": self._bucket,
            "Key": self._full_key(key),
            "UploadId": upload_id,
            "PartNumber": part,
        }
        return cast(
            str,
            self.call(
                "presigning",
                key,
                lambda: self._client.generate_presigned_url(
                    "upload_part", Params=params, ExpiresIn=expires
                ),
            ),
        )

    def complete_multipart(
        self, key: str, upload_id: str, parts: Iterable[tuple[int, str]]
    ) -> ObjectInfo:
        """Complete the multipart upload of ``key`` from ``(part number, ETag)`` pairs;
        StorageError when S3 refuses them."""
        full = self._full_key(key)
        listed = [{"PartNumber": n, "ETag": etag} for n, etag in parts]
        self.call(
            "completing the multipart upload of",
            key,
            lambda: self._client.complete_multipart_upload(
                Bucket=self._bucket,
                Key=full,
                UploadId=upload_id,
                MultipartUpload={"Parts": listed},
            ),
        )
        return self.stat(key)

    def abort_multipart(self, key: str, upload_id: str) -> None:
        """Abort the multipart upload ``upload_id`` of ``key`` (its parts are deleted)."""
        full = self._full_key(key)
        self.call(
            "aborting the multipart upload of",
            key,
            lambda: self._client.abort_multipart_upload(
                Bucket=self._bucket, Key=full, UploadId=upload_id
            ),
        )


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _utc(value: datetime) -> datetime:
    """A boto3 timestamp (tz-aware datetime) converted to UTC."""
    return value.astimezone(UTC)
