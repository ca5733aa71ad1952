"""The push-style writer of :class:`~graveler.storage.objectstore.s3.S3ObjectStore`.

Bytes are buffered up to one part (:data:`~graveler.storage.objectstore.s3.MULTIPART_CHUNK`). An
object that never fills a part is sent with one PutObject at ``commit``; a bigger one becomes
a multipart upload whose parts are sent as they fill, so memory stays bounded by about one
part whatever the object's size. S3 publishes the object only when ``commit`` completes the
upload (atomic, and durable once S3 acknowledges it); ``abort`` aborts the multipart upload.
A multipart upload whose abort fails is left for the bucket's lifecycle rule
(``AbortIncompleteMultipartUpload``) to remove: it never appears as an object.

This module talks to S3 only through the store's client and its error translation, so boto3
stays imported by :mod:`graveler.storage.objectstore.s3` alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from graveler.storage.objectstore._io import BaseObjectWriter, utc_now
from graveler.storage.objectstore.port import ObjectInfo

_T = TypeVar("_T")


class S3Calls(Protocol):
    """What the writer needs from its store."""

    @property
    def bucket(self) -> str: ...

    @property
    def client(self) -> Any: ...

    def call(self, action: str, key: str | None, fn: Callable[[], _T]) -> _T:
        """Run one boto3 call and translate what escapes into graveler's errors."""
        ...


class S3ObjectWriter(BaseObjectWriter):
    """One object written to ``full_key`` of the store's bucket in parts of ``part_size``."""

    def __init__(self, store: S3Calls, key: str, full_key: str, part_size: int) -> None:
        super().__init__(key)
        self._s3 = store
        self._full = full_key
        self._part_size = part_size
        self._buffer = bytearray()
        self._upload_id: str | None = None
        self._parts: list[dict[str, Any]] = []

    def _write(self, view: memoryview) -> None:
        self._buffer += view
        while len(self._buffer) >= self._part_size:
            part = bytes(self._buffer[: self._part_size])
            del self._buffer[: self._part_size]
            self._send_part(part)

    def _send_part(self, part: bytes) -> None:
        s3, bucket, key = self._s3, self._s3.bucket, self._full
        if self._upload_id is None:
            created = s3.call(
                "starting the upload of",
                self.key,
                lambda: s3.client.create_multipart_upload(Bucket=bucket, Key=key),
            )
            self._upload_id = str(created["UploadId"])
        number, upload_id = len(self._parts) + 1, self._upload_id
        sent = s3.call(
            "writing",
            self.key,
            lambda: s3.client.upload_part(
                Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=part
            ),
        )
        self._parts.append({"PartNumber": number, "ETag": sent["ETag"]})

    def _publish(self) -> ObjectInfo:
        s3, bucket, key = self._s3, self._s3.bucket, self._full
        if self._upload_id is None:
            body = bytes(self._buffer)
            s3.call(
                "writing",
                self.key,
                lambda: s3.client.put_object(Bucket=bucket, Key=key, Body=body),
            )
        else:
            if self._buffer or not self._parts:
                self._send_part(bytes(self._buffer))
            upload_id, parts = self._upload_id, {"Parts": self._parts}
            s3.call(
                "completing the upload of",
                self.key,
                lambda: s3.client.complete_multipart_upload(
                    Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload=parts
                ),
            )
        self._buffer.clear()
        return ObjectInfo(self.key, self.size, utc_now())

    def _discard(self) -> None:
        self._buffer.clear()
        if self._upload_id is None:
            return
        s3, bucket, key, upload_id = self._s3, self._s3.bucket, self._full, self._upload_id
        s3.call(
            "aborting the upload of",
            self.key,
            lambda: s3.client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id),
        )
