"""graveler's errors as lakeFS's API answers them: one place for the mapping.

Every error answer is ``{"message": "..."}`` with the status lakeFS gives the condition
(its ``handleAPIError``): a name or argument that is wrong is 400, so is a commit with nothing
to commit and a branch that must be clean; an unknown key is 401; a key whose scope does not
reach the repository, or a protected branch, is 403; anything missing is 404; a taken name
or a merge conflict is 409; a failed condition or a refusing ``pre-`` hook is 412. Messages
are graveler's own (they never hold secrets), except where lakeFS's clients or scripts see
lakeFS's exact words: a protected branch, a missing repository or ref, a failed
authentication (:data:`_LAKEFS_MESSAGES`). Anything unexpected is logged and answered 500
without detail.
"""

from __future__ import annotations

import json
import logging

from graveler.core.errors import (
    AccessDenied,
    AuthenticationFailed,
    BranchMoved,
    CommitToProtectedBranch,
    Conflict,
    CorruptFile,
    DirtyBranch,
    GravelerError,
    HookAborted,
    InvalidArgument,
    NamespaceInUse,
    NoChanges,
    NotFound,
    PreconditionFailed,
    ProtectedBranch,
    RefNotFound,
    RepositoryNotFound,
    StorageError,
    WriteToProtectedBranch,
)
from graveler.server.observe import request_id

log = logging.getLogger("graveler.server.lakefs")

#: lakeFS's message for a request without (valid) credentials.
UNAUTHENTICATED = "error authenticating request"


class ApiError(Exception):
    """An answer decided by the API layer itself: ``status``, ``message`` and headers the
    answer carries."""

    def __init__(
        self, status: int, message: str, headers: list[tuple[str, str]] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or []


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def not_found(message: str) -> ApiError:
    return ApiError(404, message)


def not_implemented(what: str) -> ApiError:
    """501, as lakeFS's open-source build answers what it leaves to an external service."""
    return ApiError(501, f"not implemented: {what}")


def body(message: str) -> bytes:
    """lakeFS's error body, with the server's request ID beside the message (lakeFS's
    clients read the message and ignore what they do not know)."""
    return json.dumps({"message": message, "request_id": request_id()}).encode()


#: lakeFS's own messages for conditions its clients match on (lakefs-spec turns a 403 on a
#: write into ``PermissionError("403 cannot write to protected branch: ...")``) or print as
#: they are (lakectl prints the message and the status: ``repository not found``, then
#: ``404 Not Found``). A ref that is no branch, tag or commit is lakeFS's "commit not found".
_LAKEFS_MESSAGES: tuple[tuple[type[BaseException], str], ...] = (
    (WriteToProtectedBranch, "cannot write to protected branch"),
    (CommitToProtectedBranch, "cannot commit to protected branch"),
    (RepositoryNotFound, "repository not found"),
    (RefNotFound, "commit not found"),
)

#: (error class, status), most specific first: the first class the error is an instance of
#: decides.
_STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (AuthenticationFailed, 401),
    (AccessDenied, 403),
    (ProtectedBranch, 403),
    (NotFound, 404),
    (NamespaceInUse, 400),
    (NoChanges, 400),
    (DirtyBranch, 400),
    (InvalidArgument, 400),
    (PreconditionFailed, 412),
    (HookAborted, 412),
    (BranchMoved, 409),
    (Conflict, 409),
)


def classify(exc: BaseException) -> tuple[int, str]:
    """(status, message) of an exception raised while serving a request."""
    if isinstance(exc, ApiError):
        return exc.status, exc.message
    if isinstance(exc, GravelerError):
        for kind, status in _STATUS:
            if isinstance(exc, kind):
                return status, _message(exc, status)
        if isinstance(exc, CorruptFile):
            log.error("lakeFS API: corrupt data: %s", exc)
            return 500, f"stored data failed its integrity check: {exc}"
        if isinstance(exc, StorageError):
            log.error("lakeFS API: storage error: %s", exc)
            return 503, f"storage unavailable: {exc}"
    log.error("lakeFS API: unexpected error", exc_info=exc)
    return 500, "internal server error"


def _message(exc: GravelerError, status: int) -> str:
    for kind, message in _LAKEFS_MESSAGES:
        if isinstance(exc, kind):
            return message
    if status == 401:
        return UNAUTHENTICATED  # lakeFS's words, whatever was wrong with the credentials
    return str(exc) or type(exc).__name__
