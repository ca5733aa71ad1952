"""S3 errors: the code, HTTP status and message a client gets, and the mapping from
graveler's own error tree."""

from __future__ import annotations

from graveler.core import errors as g
from graveler.server.sigv4 import SignatureError


class S3Error(Exception):
    """An error answered with S3's XML error body."""

    def __init__(self, code: str, message: str, status: int, **extra: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.extra = extra


def no_such_bucket(bucket: str) -> S3Error:
    return S3Error("NoSuchBucket", "the specified bucket does not exist", 404, BucketName=bucket)


def no_such_key(key: str) -> S3Error:
    return S3Error("NoSuchKey", "the specified key does not exist", 404, Key=key)


def method_not_allowed(message: str) -> S3Error:
    return S3Error("MethodNotAllowed", message, 405)


def invalid_argument(message: str) -> S3Error:
    return S3Error("InvalidArgument", message, 400)


def not_implemented(what: str) -> S3Error:
    return S3Error("NotImplemented", f"{what} is not implemented by graveler's S3 gateway", 501)


#: graveler errors (most specific first) -> S3 code and status.
_MAPPING: tuple[tuple[type[Exception], str, int], ...] = (
    (g.AuthenticationFailed, "InvalidAccessKeyId", 403),
    (g.AccessDenied, "AccessDenied", 403),
    (g.ProtectedBranch, "AccessDenied", 403),
    (g.PreconditionFailed, "PreconditionFailed", 412),
    (g.UploadNotFound, "NoSuchUpload", 404),
    (g.InvalidPartOrder, "InvalidPartOrder", 400),
    (g.InvalidPart, "InvalidPart", 400),
    (g.EntityTooSmall, "EntityTooSmall", 400),
    (g.ObjectNotFound, "NoSuchKey", 404),
    (g.RepositoryNotFound, "NoSuchBucket", 404),
    (g.NotFound, "NoSuchKey", 404),
    (g.InvalidKey, "KeyTooLongError", 400),
    (g.InvalidArgument, "InvalidArgument", 400),
    (g.AlreadyExists, "BucketAlreadyExists", 409),
    (g.Conflict, "OperationAborted", 409),
    (g.CorruptFile, "InternalError", 500),
    (g.StorageError, "ServiceUnavailable", 503),
)


def from_graveler(exc: Exception) -> S3Error:
    """The S3 error for a graveler error (InternalError for anything unknown)."""
    if isinstance(exc, S3Error):
        return exc
    if isinstance(exc, SignatureError):
        return S3Error(exc.code, str(exc), exc.status)
    if isinstance(exc, g.InvalidKey) and "limit" not in str(exc):
        return S3Error("InvalidArgument", str(exc), 400)
    for kind, code, status in _MAPPING:
        if isinstance(exc, kind):
            return S3Error(code, str(exc), status)
    return S3Error("InternalError", "we encountered an internal error, please try again", 500)
