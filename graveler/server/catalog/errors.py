"""graveler's errors as the Iceberg REST catalog's error model.

Every error response is ``{"error": {"message", "type", "code"}}`` with the HTTP status the
spec gives the condition; the ``type`` names are the exception classes the Java client maps
them back to. Messages never carry secrets (graveler's own errors never hold any). An error
inside a commit whose outcome is not known (anything but a refusal) is a 500
``CommitStateUnknownException``, as the spec asks, so clients do not blindly retry it.
"""

from __future__ import annotations

import json
import logging

from pydantic import ValidationError

from graveler.core.errors import (
    AccessDenied,
    AlreadyExists,
    AuthenticationFailed,
    BranchMoved,
    Conflict,
    GravelerError,
    HookAborted,
    InvalidArgument,
    NotFound,
    ProtectedBranch,
    RepositoryNotFound,
    TableCommitFailed,
    TableNamespaceNotEmpty,
    TableNotFound,
)
from graveler.server.observe import request_id

log = logging.getLogger(__name__)


class RestError(Exception):
    """An error response decided by the REST layer itself."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


def body(status: int, kind: str, message: str) -> bytes:
    """The error model's document, with the server's request ID beside the error (clients
    ignore what they do not know; people quote it when they report a failure)."""
    error = {"message": message, "type": kind, "code": status}
    return json.dumps({"error": error, "request_id": request_id()}).encode()


def classify(exc: BaseException, *, committing: bool = False) -> tuple[int, str, str]:
    """(status, type, message) for an exception raised while serving a request."""
    if isinstance(exc, RestError):
        return exc.status, exc.kind, str(exc)
    if isinstance(exc, ValidationError):
        return 400, "BadRequestException", _validation_message(exc)
    known = _graveler(exc) if isinstance(exc, GravelerError) else None
    if known is not None:
        return (*known, str(exc))
    log.error("iceberg catalog: unexpected error", exc_info=exc)
    if committing:
        return 500, "CommitStateUnknownException", "internal error; the commit state is unknown"
    return 500, "InternalServerError", "internal server error"


def _graveler(exc: GravelerError) -> tuple[int, str] | None:
    if isinstance(exc, AuthenticationFailed):
        return 401, "NotAuthorizedException"
    if isinstance(exc, AccessDenied | ProtectedBranch):
        return 403, "ForbiddenException"
    if isinstance(exc, RepositoryNotFound):
        return 404, "NoSuchWarehouseException"
    if isinstance(exc, TableNotFound):
        return 404, "NoSuchTableException"
    if isinstance(exc, NotFound):
        return 404, "NoSuchNamespaceException"
    if isinstance(exc, TableNamespaceNotEmpty):
        return 409, "NamespaceNotEmptyException"
    if isinstance(exc, AlreadyExists):
        return 409, "AlreadyExistsException"
    if isinstance(exc, TableCommitFailed | BranchMoved):
        return 409, "CommitFailedException"
    if isinstance(exc, HookAborted | InvalidArgument):
        return 400, "BadRequestException"
    if isinstance(exc, Conflict):
        return 409, "CommitFailedException"
    return None


def _validation_message(exc: ValidationError) -> str:
    problems = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()))
        problems.append(f"{where}: {err.get('msg', 'invalid')}")
    return "malformed request: " + "; ".join(problems)
