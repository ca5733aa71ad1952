"""The one error tree of graveler.

Every failure that crosses a public boundary is a :class:`GravelerError`. Backends translate
their own exceptions (``botocore``, ``sqlalchemy``, ``OSError``) at the boundary with
``raise NotFound(...) from exc`` so callers never have to know which backend is in use.

Each class carries a CLI exit code (``exit_code``): 3 not found, 4 conflict, 2 bad input,
1 anything else.
"""

from __future__ import annotations

from collections.abc import Sequence


class GravelerError(Exception):
    """Base class of every error graveler raises on purpose."""

    exit_code = 1


# --- bad input -------------------------------------------------------------------------------


class InvalidArgument(GravelerError, ValueError):
    """The caller passed something malformed; nothing was changed."""

    exit_code = 2


class InvalidName(InvalidArgument):
    """A repository, branch or tag name breaks the naming rules."""


class InvalidKey(InvalidArgument):
    """An object key (path) is empty, too long, not UTF-8, contains NUL, or escapes its root."""


class InvalidRef(InvalidArgument):
    """A ref expression cannot be parsed."""


class InvalidURI(InvalidArgument):
    """A ``graveler://`` / ``lakefs://`` / storage URI cannot be parsed or is not supported."""


class InvalidAction(InvalidArgument):
    """An action file (``_graveler_actions/*.yaml``) is malformed."""


class InvalidPart(InvalidArgument):
    """A multipart completion names a part that was not uploaded, or with another ETag."""


class InvalidPartOrder(InvalidArgument):
    """A multipart completion lists its parts out of ascending order."""


class EntityTooSmall(InvalidArgument):
    """A part other than the last of a multipart upload is smaller than 5 MiB."""


# --- missing things ----------------------------------------------------------------------------


class NotFound(GravelerError, LookupError):
    """Something that was asked for does not exist."""

    exit_code = 3


class ObjectNotFound(NotFound):
    """No object at this key (in an object store, or at a path in a ref)."""


class RepositoryNotFound(NotFound):
    pass


class BranchNotFound(NotFound):
    pass


class TagNotFound(NotFound):
    pass


class CommitNotFound(NotFound):
    pass


class UploadNotFound(NotFound):
    """No multipart upload with this ID (never created, completed or aborted)."""


class RefNotFound(NotFound):
    """A ref expression is well formed but resolves to nothing (or to more than one commit)."""


class TableNotFound(NotFound):
    """No table by this name in this namespace at this ref (Iceberg's NoSuchTableException)."""


class TableNamespaceNotFound(NotFound):
    """No table namespace by this name at this ref (Iceberg's NoSuchNamespaceException)."""


# --- conflicts ---------------------------------------------------------------------------------


class Conflict(GravelerError):
    """The operation collides with the current state; retrying as-is will not help."""

    exit_code = 4


class AlreadyExists(Conflict):
    """A name is taken (repository, branch, tag)."""


class NamespaceInUse(AlreadyExists):
    """A storage namespace is, lies inside or contains another repository's namespace, or its
    ownership marker names another repository. A repository owns its namespace alone."""


class MergeConflict(Conflict):
    """A three-way merge found keys changed differently on both sides."""

    def __init__(self, keys: Sequence[bytes | str], message: str | None = None) -> None:
        self.keys: list[str] = [
            k.decode("utf-8", "replace") if isinstance(k, bytes) else k for k in keys
        ]
        shown = ", ".join(self.keys[:10]) + (" ..." if len(self.keys) > 10 else "")
        super().__init__(
            message
            or f"merge conflict on {len(self.keys)} key(s): {shown}; "
            "retry with strategy 'dest-wins' or 'source-wins', or resolve on a branch"
        )


class TableConflict(MergeConflict):
    """Both sides of a merge changed one table (Delta Lake, Iceberg) in ways its format's own
    rules refuse to combine. ``table`` is the table's root path, ``format`` its format,
    ``kind`` the format's own name for the conflict (Delta's ``ConcurrentAppend``,
    ``MetadataChanged``...; Iceberg's validation that failed), ``source_version`` and
    ``dest_version`` the table versions (or snapshot IDs) of the two sides."""

    def __init__(
        self,
        table: str,
        format: str,
        kind: str,
        reason: str,
        *,
        source_version: object = None,
        dest_version: object = None,
    ) -> None:
        self.table = table
        self.format = format
        self.kind = kind
        self.reason = reason
        self.source_version = source_version
        self.dest_version = dest_version
        versions = ""
        if source_version is not None or dest_version is not None:
            versions = f" (source at version {source_version}, destination at {dest_version})"
        super().__init__(
            [table],
            f"{format} table {table or '/'!r} conflicts{versions}: {kind}: {reason}; "
            "retry with strategy 'dest-wins' or 'source-wins' to take the whole table from "
            "one side",
        )


class TableNamespaceNotEmpty(Conflict):
    """A table namespace still holds tables or namespaces, so it cannot be dropped."""


class TableCommitFailed(Conflict):
    """A table commit's requirements do not hold against the table as it is now (Iceberg's
    CommitFailedException): another commit got there first. Nothing was changed; reload the
    table and retry."""


class PreconditionFailed(Conflict):
    """A conditional write found the object not as the condition required (an object
    already at the path for put-if-absent, another object than the expected one for
    if-match); nothing was written."""


class BranchMoved(Conflict):
    """A compare-and-swap on a branch lost its race (after all retries, when raised publicly)."""


class ProtectedBranch(Conflict):
    """The branch is protected: it accepts merges only, no direct writes or commits."""


class WriteToProtectedBranch(ProtectedBranch):
    """A staged write (an upload, a delete, a link) to a protected branch."""


class CommitToProtectedBranch(ProtectedBranch):
    """A commit on a protected branch."""


class NoChanges(Conflict):
    """A commit (or merge) would not change anything."""


class NotFastForward(Conflict):
    """A merge asked to fast-forward only (``--ff-only``) found that the destination has
    commits the source does not, so it cannot simply move to the source."""


class DirtyBranch(Conflict):
    """The branch has uncommitted changes that the operation would silently drop."""


class HookAborted(Conflict):
    """A ``pre-`` hook failed, so the operation was refused and changed nothing (lakeFS's
    HookAbortError). ``run_id`` names the recorded run (``graveler actions runs describe``)."""

    def __init__(self, event: str, run_id: str, reason: str) -> None:
        self.event = event
        self.run_id = run_id
        super().__init__(f"{event} hook failed (run {run_id}): {reason}")


# --- access ------------------------------------------------------------------------------------


class AccessDenied(GravelerError):
    """The caller's credentials do not allow the operation (or there are none)."""

    exit_code = 1


class AuthenticationFailed(AccessDenied):
    """The credentials given are unknown, wrong, expired or badly formed."""


class ReadOnlyRef(AccessDenied):
    """A write addressed a tag or a commit: only branches take writes (tables at tags and
    commits are read-only)."""


# --- storage and integrity ---------------------------------------------------------------------


class StorageError(GravelerError):
    """An object store or database failed in a way graveler could not retry around."""


class CorruptFile(GravelerError):
    """A stored file is damaged: bad magic, bad block checksum, truncation, or a content hash
    that does not match its name. Corrupt data is never served."""


class UnsupportedFormat(CorruptFile):
    """A file declares a format version this build of graveler does not understand."""
